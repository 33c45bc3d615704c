//! What `GET /metrics` answers, in Prometheus' text format: requests by front end, service and
//! status, the bytes each way, durations, the bundle lists handed out, and, for a node on a
//! store, the store's requests and bytes by kind, its manifest conflicts and how often the
//! node found itself up to date.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use sluice_repo::storage::Storage;
use std::sync::{Arc, OnceLock};

/// One request's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    scheme: &'static str,
    service: String,
    status: String,
}

/// A front end and a service.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServiceLabels {
    scheme: &'static str,
    service: String,
}

/// The server's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    sent: Family<ServiceLabels, Counter>,
    received: Family<ServiceLabels, Counter>,
    durations: Family<ServiceLabels, Histogram>,
    bundle_lists: Counter,
    store: Arc<StoreMetrics>,
}

/// Counts kept elsewhere, read at each scrape: the storage's (a store's requests) and the
/// pack cache's.
#[derive(Debug, Default)]
struct StoreMetrics {
    storage: OnceLock<Arc<dyn Storage>>,
    pack_cache: OnceLock<Arc<crate::PackCache>>,
}

/// One request, as the access log has it.
pub(crate) struct Served<'a> {
    pub(crate) scheme: &'static str,
    pub(crate) service: Option<&'a str>,
    /// The HTTP status, or `ok`/`error` for git://.
    pub(crate) status: String,
    pub(crate) sent: u64,
    pub(crate) received: u64,
    pub(crate) seconds: f64,
}

impl Metrics {
    /// Every metric at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("sluice");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("requests", "Requests served", requests.clone());
        let sent = Family::<ServiceLabels, Counter>::default();
        registry.register("sent_bytes", "Bytes sent to clients", sent.clone());
        let received = Family::<ServiceLabels, Counter>::default();
        registry.register(
            "received_bytes",
            "Bytes received from clients",
            received.clone(),
        );
        let durations = Family::<ServiceLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.005, 4.0, 10))
        });
        registry.register(
            "request_duration_seconds",
            "How long requests took",
            durations.clone(),
        );
        let bundle_lists = Counter::default();
        registry.register(
            "bundle_lists",
            "Bundle lists handed out (bundle-uri), each a clone or fetch served mostly by the store",
            bundle_lists.clone(),
        );
        let store = Arc::new(StoreMetrics::default());
        registry.register_collector(Box::new(Arc::clone(&store)));
        Metrics {
            registry,
            requests,
            sent,
            received,
            durations,
            bundle_lists,
            store,
        }
    }

    /// Reports the counters of `storage` from now on.
    pub fn watch_storage(&self, storage: Arc<dyn Storage>) {
        let _ = self.store.storage.set(storage);
    }

    /// Reports the hits and misses of `cache` from now on.
    pub fn watch_pack_cache(&self, cache: Arc<crate::PackCache>) {
        let _ = self.store.pack_cache.set(cache);
    }

    /// Counts one request.
    pub(crate) fn served(&self, request: &Served<'_>) {
        let service = request.service.unwrap_or("-").to_owned();
        let labels = ServiceLabels {
            scheme: request.scheme,
            service: service.clone(),
        };
        self.requests
            .get_or_create(&RequestLabels {
                scheme: request.scheme,
                service,
                status: request.status.clone(),
            })
            .inc();
        self.sent.get_or_create(&labels).inc_by(request.sent);
        self.received
            .get_or_create(&labels)
            .inc_by(request.received);
        self.durations
            .get_or_create(&labels)
            .observe(request.seconds);
    }

    /// Counts one bundle list handed out.
    pub(crate) fn bundle_list(&self) {
        self.bundle_lists.inc();
    }

    /// The text a scrape gets.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// Writes counters read elsewhere: name, help, value.
fn counters(
    encoder: &mut DescriptorEncoder,
    all: &[(&str, &str, u64)],
) -> Result<(), std::fmt::Error> {
    for &(name, help, value) in all {
        let counter = ConstCounter::new(value);
        let metric = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
        counter.encode(metric)?;
    }
    Ok(())
}

impl Collector for StoreMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if let Some(cache) = self.pack_cache.get() {
            let (hits, misses) = cache.counts();
            let all = [
                ("pack_cache_hits", "Packs served from the pack cache", hits),
                (
                    "pack_cache_misses",
                    "Packs made anew (and kept in the cache)",
                    misses,
                ),
            ];
            counters(&mut encoder, &all)?;
        }
        let Some(storage) = self.storage.get() else {
            return Ok(());
        };
        let all: Vec<_> = (storage.counters().into_iter())
            .map(|counter| (counter.name, counter.help, counter.value))
            .collect();
        counters(&mut encoder, &all)?;
        Ok(())
    }
}

//! Sending the pack: generating it (or taking it from the pack cache), with progress and
//! keepalives on the side-band.

use super::{pack_hook, Request, Session};
use crate::pack_cache::{CacheKey, Tee};
use crate::remote_progress::BandSink;
use crate::ServeError;
use sluice_generate::{write_pack, write_pack_remembered, PackOptions, PackStats};
use sluice_graph::{walk_objects, WalkRequest};
use sluice_object::progress::{Progress, ProgressSink, TextProgress};
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_wire::sideband::{Band, Sideband};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

/// Notes when the first pack byte is written, which ends the keepalives.
struct NoticeStart<'a, W: Write> {
    inner: W,
    started: &'a AtomicBool,
}

impl<W: Write> Write for NoticeStart<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.started.store(true, Ordering::Relaxed);
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<R: Read, W: Write + Send + 'static> Session<'_, R, W> {
    /// Counts, writes and sends the pack (or has `uploadpack.packObjectsHook` make it), then
    /// the final flush.
    pub(super) fn send_pack(
        &mut self,
        request: &Request,
        shallow: &IdSet,
    ) -> Result<(), ServeError> {
        if let Some(hook) = pack_hook::configured()? {
            return self.send_hook_pack(&hook, request, shallow);
        }
        let Some(max_payload) = request.side_band else {
            // No side band: the pack is the rest of the stream.
            let out = self.out.clone();
            self.generate_cached(request, shallow, out, &sluice_object::progress::Discard)?;
            self.out.flush()?;
            return Ok(());
        };
        let band = Arc::new(Sideband::new(self.out.clone(), max_payload));
        let sink: Option<Box<dyn ProgressSink>> = (!request.no_progress)
            .then(|| Box::new(BandSink(Arc::clone(&band))) as Box<dyn ProgressSink>);
        let progress = TextProgress::new(sink);
        let keepalive = self.keepalive_interval()?;
        let started = AtomicBool::new(false);
        let (stop, stopped) = mpsc::channel::<()>();
        let result = std::thread::scope(|scope| {
            if let Some(interval) = keepalive {
                let (band, started) = (&band, &started);
                // Counting and the delta search can be long and silent: git's clients (and
                // proxies) give up on a connection that says nothing.
                scope.spawn(move || {
                    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval)
                    {
                        if started.load(Ordering::Relaxed) || band.keepalive().is_err() {
                            break;
                        }
                    }
                });
            }
            let mut data = NoticeStart {
                inner: band.data(),
                started: &started,
            };
            let result = self.generate_cached(request, shallow, &mut data, &progress);
            let result = result.and_then(|stats| {
                data.flush()?;
                Ok(stats)
            });
            drop(stop);
            result
        });
        drop(progress);
        match result {
            Ok(stats) => {
                if !request.no_progress {
                    band.send(Band::Progress, format!("{stats}\n").as_bytes())?;
                }
                self.flush()
            }
            Err(error) => {
                let _ = band.send(Band::Error, format!("{error}\n").as_bytes());
                Err(error)
            }
        }
    }

    /// The pack the hook makes, relayed as git relays pack-objects': its stdout on band 1
    /// (or the stream), its stderr on band 2 (or dropped without a side band).
    fn send_hook_pack(
        &mut self,
        hook: &str,
        request: &Request,
        shallow: &IdSet,
    ) -> Result<(), ServeError> {
        let git_dir = self.repo.git_dir().to_owned();
        let Some(max_payload) = request.side_band else {
            let mut out = self.out.clone();
            pack_hook::run(hook, &git_dir, request, shallow, &mut out, &mut |_| {})?;
            self.out.flush()?;
            return Ok(());
        };
        let band = Arc::new(Sideband::new(self.out.clone(), max_payload));
        let progress_band = Arc::clone(&band);
        let mut progress = move |text: &[u8]| {
            let _ = progress_band.send(Band::Progress, text);
        };
        let mut data = band.data();
        let result = pack_hook::run(hook, &git_dir, request, shallow, &mut data, &mut progress);
        let result = result.and_then(|()| Ok(data.flush()?));
        match result {
            Ok(()) => self.flush(),
            Err(error) => {
                let _ = band.send(Band::Error, format!("{error}\n").as_bytes());
                Err(error)
            }
        }
    }

    fn generate<O: Write>(
        &self,
        request: &Request,
        shallow: &IdSet,
        out: O,
        progress: &dyn Progress,
    ) -> Result<PackStats, ServeError> {
        let odb = self.repo.objects();
        // `pack.useBitmaps=false`: counted by walking history, as git's pack-objects then.
        let walk = match self.repo.config().get_bool("pack.usebitmaps")? {
            Some(false) => sluice_graph::traverse_objects,
            _ => walk_objects,
        };
        let mut walked = walk(
            odb,
            &WalkRequest {
                wants: &request.wants,
                haves: &request.haves,
                shallow,
                filter: request.filter,
                reach_memo: self.options.memory.as_ref().map(|m| &m.reaches),
                cores: sluice_graph::WalkCores::One,
                // A request runs to its end: a client that leaves fails the next write.
                missing: Default::default(),
                cancel: Default::default(),
            },
            progress,
        )?;
        if request.include_tag {
            let sent: IdSet = walked.objects.iter().map(|o| o.id).collect();
            for r in &self.refs.refs {
                let (Some(target), true) = (r.peeled, r.name.starts_with("refs/tags/")) else {
                    continue;
                };
                if sent.contains(&target) && !sent.contains(&r.id) {
                    walked.objects.push(sluice_graph::WalkedObject {
                        id: r.id,
                        kind: ObjectKind::Tag,
                        name_hash: 0,
                        previous: None,
                    });
                }
            }
        }
        let options = PackOptions {
            thin: request.thin,
            ofs_delta: request.ofs_delta,
            compression: self.compression()?,
            show_writing: false,
            window_search: None,
            cancel: Default::default(),
            islands: None,
            allow_pack_reuse: PackOptions::allow_pack_reuse_of(self.repo.config())?,
            // A pack served says nothing of its search.
            threads: 0,
        };
        let (_, stats) = match &self.options.memory {
            Some(memory) => {
                let memo = &*memory.checksums;
                write_pack_remembered(odb, &walked, &options, memo, out, progress)?
            }
            None => write_pack(odb, &walked, &options, out, progress)?,
        };
        Ok(stats)
    }

    /// The identity of the pack `request` gets, for the pack cache.
    fn cache_key(&self, request: &Request, shallow: &IdSet) -> CacheKey {
        // A store's repository is named by its generation, the same on every node; a
        // directory's by its path.
        let mut key = CacheKey::new(self.options.shared_as.clone());
        match &self.options.shared_as {
            Some(scope) => key.add(scope.as_bytes()),
            None => key.add(self.repo.git_dir().as_os_str().as_encoded_bytes()),
        };
        for id in &request.wants {
            key.add(id.as_bytes());
        }
        key.add(b"haves");
        for id in &request.haves {
            key.add(id.as_bytes());
        }
        key.add(b"shallow");
        let mut shallow: Vec<&ObjectId> = shallow.iter().collect();
        shallow.sort_unstable();
        for id in shallow {
            key.add(id.as_bytes());
        }
        key.add(format!("{:?}", request.filter).as_bytes());
        key.add(&[
            u8::from(request.thin),
            u8::from(request.ofs_delta),
            u8::from(request.include_tag),
        ]);
        if request.include_tag {
            for r in &self.refs.refs {
                key.add(r.name.as_bytes()).add(r.id.as_bytes());
            }
        }
        key
    }

    /// The pack for `request`, from the pack cache when it has it.
    fn generate_cached<O: Write>(
        &self,
        request: &Request,
        shallow: &IdSet,
        mut out: O,
        progress: &dyn Progress,
    ) -> Result<PackStats, ServeError> {
        let Some(cache) = self.options.pack_cache.clone() else {
            return self.generate(request, shallow, out, progress);
        };
        let mut writer = match cache.lookup(self.cache_key(request, shallow), &mut out)? {
            Ok(stats) => return Ok(stats),
            Err(writer) => writer,
        };
        let tee = Tee {
            out,
            cache: &mut writer,
        };
        let stats = self.generate(request, shallow, tee, progress)?;
        writer.commit(&stats);
        Ok(stats)
    }

    /// `uploadpack.keepAlive`: seconds of silence before an empty packet; 0 turns it off.
    fn keepalive_interval(&self) -> Result<Option<std::time::Duration>, ServeError> {
        let seconds = self
            .repo
            .config()
            .get_int("uploadpack.keepalive")?
            .unwrap_or(5);
        Ok((seconds > 0).then(|| std::time::Duration::from_secs(seconds as u64)))
    }

    fn compression(&self) -> Result<u32, ServeError> {
        Ok(PackOptions::compression_of(self.repo.config())?)
    }
}

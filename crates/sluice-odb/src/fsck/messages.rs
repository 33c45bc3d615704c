//! git's fsck message ids and their default severities (`git help fsck`, "FSCK MESSAGES").

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// Refuses the object.
    Error,
    /// Printed; refuses under strict checking (index-pack, fetch, receive-pack) by default.
    Warn,
    /// Printed as a warning, never refuses.
    Info,
    /// Not reported.
    Ignore,
}

impl Severity {
    /// From git's names (`error`, `warn`, `ignore`), in any case.
    pub fn from_name(name: &str) -> Option<Severity> {
        match name.to_ascii_lowercase().as_str() {
            "error" => Some(Severity::Error),
            "warn" => Some(Severity::Warn),
            "ignore" => Some(Severity::Ignore),
            _ => None,
        }
    }
}

macro_rules! messages {
    ($($variant:ident $name:literal $severity:ident,)*) => {
        /// What fsck found wrong, as git names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Message {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl Message {
            const ALL: &'static [(Message, &'static str, Severity)] =
                &[$((Message::$variant, $name, Severity::$severity),)*];
        }
    };
}

messages! {
    BadDate "badDate" Error,
    BadDateOverflow "badDateOverflow" Error,
    BadEmail "badEmail" Error,
    BadName "badName" Error,
    BadObjectSha1 "badObjectSha1" Error,
    BadParentSha1 "badParentSha1" Error,
    BadTimezone "badTimezone" Error,
    BadTree "badTree" Error,
    BadTreeSha1 "badTreeSha1" Error,
    BadType "badType" Error,
    DuplicateEntries "duplicateEntries" Error,
    MissingAuthor "missingAuthor" Error,
    MissingCommitter "missingCommitter" Error,
    MissingEmail "missingEmail" Error,
    MissingNameBeforeEmail "missingNameBeforeEmail" Error,
    MissingObject "missingObject" Error,
    MissingSpaceBeforeDate "missingSpaceBeforeDate" Error,
    MissingSpaceBeforeEmail "missingSpaceBeforeEmail" Error,
    MissingTag "missingTag" Error,
    MissingTagEntry "missingTagEntry" Error,
    MissingTree "missingTree" Error,
    MissingType "missingType" Error,
    MissingTypeEntry "missingTypeEntry" Error,
    MultipleAuthors "multipleAuthors" Error,
    TreeNotSorted "treeNotSorted" Error,
    UnknownType "unknownType" Error,
    ZeroPaddedDate "zeroPaddedDate" Error,
    GitmodulesMissing "gitmodulesMissing" Error,
    GitmodulesBlob "gitmodulesBlob" Error,
    GitmodulesLarge "gitmodulesLarge" Error,
    GitmodulesName "gitmodulesName" Error,
    GitmodulesSymlink "gitmodulesSymlink" Error,
    GitmodulesUrl "gitmodulesUrl" Error,
    GitmodulesPath "gitmodulesPath" Error,
    GitmodulesUpdate "gitmodulesUpdate" Error,
    GitattributesMissing "gitattributesMissing" Error,
    GitattributesLarge "gitattributesLarge" Error,
    GitattributesLineLength "gitattributesLineLength" Error,
    GitattributesBlob "gitattributesBlob" Error,
    NulInHeader "nulInHeader" Error,
    UnterminatedHeader "unterminatedHeader" Error,
    EmptyName "emptyName" Warn,
    FullPathname "fullPathname" Warn,
    HasDot "hasDot" Warn,
    HasDotdot "hasDotdot" Warn,
    HasDotgit "hasDotgit" Warn,
    NullSha1 "nullSha1" Warn,
    ZeroPaddedFilemode "zeroPaddedFilemode" Warn,
    NulInCommit "nulInCommit" Warn,
    BadFilemode "badFilemode" Info,
    GitmodulesParse "gitmodulesParse" Info,
    GitignoreSymlink "gitignoreSymlink" Info,
    GitattributesSymlink "gitattributesSymlink" Info,
    MailmapSymlink "mailmapSymlink" Info,
    BadTagName "badTagName" Info,
    MissingTaggerEntry "missingTaggerEntry" Info,
    ExtraHeaderEntry "extraHeaderEntry" Ignore,
}

impl Message {
    /// The message named `name` (git's camelCase id), in any case.
    pub fn from_name(name: &str) -> Option<Message> {
        Self::ALL
            .iter()
            .find(|(_, known, _)| known.eq_ignore_ascii_case(name))
            .map(|&(message, _, _)| message)
    }

    /// git's camelCase id.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(message, _, _)| *message == self)
            .map_or("", |&(_, name, _)| name)
    }

    /// git's severity when none is configured (before strict checking promotes warnings).
    pub fn default_severity(self) -> Severity {
        Self::ALL
            .iter()
            .find(|(message, _, _)| *message == self)
            .map_or(Severity::Error, |&(_, _, severity)| severity)
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

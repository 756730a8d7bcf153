//! The web app's bundle for `blocksight report` and `serve`: built into the binary from the
//! checked-in `collector/web/` (a `trunk build --release` output, stamped with the hash of the
//! sources it came from; see `scripts/check-web-bundle.sh`), so neither command needs a web
//! toolchain or files beside the executable. `BLOCKSIGHT_WEB_DIR` points both at another build
//! instead (a fresh `scripts/build-web.sh` into `dist/` while working on the app).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::input;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/web_bundle.rs"));
}

/// The files every bundle has; `report` inlines them and `serve` serves them.
const REQUIRED: [&str; 5] = [
    "index.html",
    "web-app.js",
    "web-app_bg.wasm",
    "worker.js",
    "worker_bg.wasm",
];

/// Where the bundle came from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// Built into the binary, from sources with this sha256 (collector/web/STAMP).
    BuiltIn {
        sources_sha256: Option<&'static str>,
    },
    /// Read from a directory named by `BLOCKSIGHT_WEB_DIR`.
    Dir(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn {
                sources_sha256: Some(h),
            } => write!(
                f,
                "the built-in web app (sources {})",
                &h[..h.len().min(12)]
            ),
            Origin::BuiltIn {
                sources_sha256: None,
            } => write!(f, "the built-in web app"),
            Origin::Dir(d) => write!(f, "the web app in {}", input::shown(d)),
        }
    }
}

/// The bundle's top-level files, by name.
pub struct WebBundle {
    pub origin: Origin,
    pub files: Vec<(String, Cow<'static, [u8]>)>,
}

impl WebBundle {
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_ref())
    }
}

/// The bundle to use: `$BLOCKSIGHT_WEB_DIR` when set (it must hold a build), else the one built
/// into the binary.
pub fn bundle() -> anyhow::Result<WebBundle> {
    match std::env::var_os("BLOCKSIGHT_WEB_DIR") {
        Some(dir) => from_dir(Path::new(&dir)),
        None => built_in(),
    }
}

fn built_in() -> anyhow::Result<WebBundle> {
    let files: Vec<_> = embedded::FILES
        .iter()
        .map(|(n, b)| ((*n).to_owned(), Cow::Borrowed(*b)))
        .collect();
    let bundle = WebBundle {
        origin: Origin::BuiltIn {
            sources_sha256: embedded::SOURCES_SHA256,
        },
        files,
    };
    if let Some(missing) = REQUIRED.iter().find(|f| bundle.file(f).is_none()) {
        bail!(
            "this blocksight was built without the web app ({missing} was not in collector/web/ \
             at build time). Rebuild it from a full checkout, build the app with \
             scripts/build-web.sh --update-bundle, or point BLOCKSIGHT_WEB_DIR at a `trunk build` \
             output"
        );
    }
    Ok(bundle)
}

/// Reads a `trunk build` output directory (its top-level files).
pub fn from_dir(dir: &Path) -> anyhow::Result<WebBundle> {
    if let Some(missing) = REQUIRED.iter().find(|f| !dir.join(f).is_file()) {
        bail!(
            "BLOCKSIGHT_WEB_DIR={} does not hold a built web app (no {missing}); build it with \
             scripts/build-web.sh, or unset BLOCKSIGHT_WEB_DIR to use the built-in one",
            input::shown(dir)
        );
    }
    let mut files = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", input::shown(dir)))?
    {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            let path = entry.path();
            let bytes = std::fs::read(&path)
                .with_context(|| format!("cannot read {}", input::shown(&path)))?;
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                Cow::Owned(bytes),
            ));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(WebBundle {
        origin: Origin::Dir(dir.to_path_buf()),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_the_app_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("blocksight-web-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("index.html"), "<html>").expect("write");
        let err = from_dir(&dir).err().expect("refused");
        assert!(err.to_string().contains("no web-app.js"), "{err}");
        for f in REQUIRED {
            std::fs::write(dir.join(f), f).expect("write");
        }
        let b = from_dir(&dir).expect("a complete bundle");
        assert_eq!(b.file("worker.js"), Some(&b"worker.js"[..]));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_built_in_bundle_is_complete_when_embedded() {
        // collector/web/ is checked in, so every build of this crate embeds the whole app.
        let b = built_in().expect("the embedded bundle");
        for f in REQUIRED {
            assert!(b.file(f).is_some_and(|x| !x.is_empty()), "{f}");
        }
        assert!(embedded::SOURCES_SHA256.is_some(), "the bundle has a stamp");
    }
}

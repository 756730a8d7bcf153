//! Helpers shared by the end-to-end tests in `tests/tests/`: where the fixtures are, how to run
//! the `blocksight` binary, and golden-file comparison with `UPDATE_EXPECT=1` to refresh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `tests/data`, the fixture folder.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Path of the `blocksight` binary built for this test run.
///
/// `cargo test` does not build other packages' binaries, and a nested `cargo build` would wait
/// forever on the build-directory lock that `cargo test` holds, so the binary must be built
/// first (`scripts/test-all.sh` runs `cargo build --bins` before `cargo test`). A binary older
/// than a source file of the collector or the engine gets a loud warning (not a failure: other
/// people's edits in a shared tree would otherwise fail unrelated test runs).
pub fn blocksight_bin() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let bin = target.join(profile).join("blocksight");
    let hint = if cfg!(debug_assertions) {
        "run `cargo build -p collector` before `cargo test`"
    } else {
        "run `cargo build --release -p collector` before `cargo test --release`"
    };
    let built = std::fs::metadata(&bin)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} does not exist: {hint}", bin.display()));
    let root = workspace_root();
    for dir in ["collector/src", "host/src", "analyzer-core/src"] {
        if let Some(newer) = newest_file(&root.join(dir)).filter(|(t, _)| *t > built) {
            eprintln!(
                "WARNING: {} is older than {}: {hint}",
                bin.display(),
                newer.1.display()
            );
        }
    }
    bin
}

fn newest_file(dir: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let candidate = if path.is_dir() {
            newest_file(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .map(|t| (t, path))
        };
        if let Some(c) = candidate {
            if newest.as_ref().is_none_or(|n| c.0 > n.0) {
                newest = Some(c);
            }
        }
    }
    newest
}

/// Runs `blocksight ARGS...` and returns its output.
pub fn run_blocksight<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(blocksight_bin())
        .args(args)
        .output()
        .expect("blocksight runs")
}

/// Runs `blocksight ARGS` that must succeed (`what` names the case in the panic) and parses its
/// standard output as JSON.
pub fn blocksight_json<I, S>(what: &str, args: I) -> serde_json::Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = run_blocksight(args);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Compares `actual` with the golden file at `path`; with `UPDATE_EXPECT=1` rewrites the file
/// instead. Panics with a readable diff hint on mismatch.
pub fn assert_golden(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create golden dir");
        }
        std::fs::write(path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_EXPECT=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the actual output at line {} (UPDATE_EXPECT=1 refreshes it)\n--- expected\n{}\n--- actual\n{}",
            path.display(),
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        );
    }
}

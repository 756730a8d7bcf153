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
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Path of the `blocksight` binary built by cargo for this test run. Builds it when missing so
/// that `cargo test -p blocksight-tests` works alone.
pub fn blocksight_bin() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let bin = target.join(profile).join("blocksight");
    if !bin.exists() {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args(["build", "-p", "collector", "--bin", "blocksight"]).current_dir(workspace_root());
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "building blocksight failed");
    }
    bin
}

/// Runs `blocksight ARGS...` and returns its output.
pub fn run_blocksight<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(blocksight_bin()).args(args).output().expect("blocksight runs")
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
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_EXPECT=1 to create it)", path.display()));
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

//! Embeds the checked-in web bundle (`collector/web/`, the `trunk build --release` output with
//! its `STAMP`) into the binary, so `blocksight report` and `serve` need no web toolchain and no
//! files beside the executable. Writes `$OUT_DIR/web_bundle.rs`: the bundle's top-level files as
//! `include_bytes!` and the stamp's sources hash. Without the folder (a source tree cut down by
//! hand) the list is empty and `report`/`serve` say how to build or point at a bundle.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
    let mut names: Vec<String> = std::fs::read_dir(&web)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "STAMP")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let stamp = std::fs::read_to_string(web.join("STAMP")).unwrap_or_default();
    let sources = stamp
        .lines()
        .find_map(|l| l.strip_prefix("sources-sha256 "))
        .map(str::trim);

    let mut out = String::from("/// The embedded bundle's files, by name.\n");
    out.push_str("pub(crate) const FILES: &[(&str, &[u8])] = &[\n");
    for name in &names {
        println!("cargo:rerun-if-changed=web/{name}");
        let path = web.join(name);
        writeln!(
            out,
            "    ({name:?}, include_bytes!({:?})),",
            path.to_string_lossy()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    out.push_str(
        "/// The sha256 of the sources the bundle was built from (collector/web/STAMP).\n",
    );
    writeln!(
        out,
        "pub(crate) const SOURCES_SHA256: Option<&str> = {};",
        match sources {
            Some(s) => format!("Some({s:?})"),
            None => "None".into(),
        }
    )
    .expect("writing to a String");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("web_bundle.rs");
    std::fs::write(dest, out).expect("cannot write web_bundle.rs");
}

//! Blocksight's web app (being built: see issue 6).

fn main() {}

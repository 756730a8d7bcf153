# Sourced by the other scripts: picks the wasm32 toolchain route and defines `wasm_cargo`.
#
# Route 1 (a normal developer machine): rustup's default toolchain has wasm32-unknown-unknown.
# Route 2 (Debian without rustup targets): Debian's rustc-web (/usr/bin/cargo, /usr/bin/rustc)
# builds std for wasm32 with build-std. Its env stays confined to wasm commands: build-std in a
# host build would rebuild std for the host too.
export PATH="$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export WASM_TARGET=wasm32-unknown-unknown

if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -q "^$WASM_TARGET\$"; then
  BLOCKSIGHT_WASM_ROUTE=rustup
  wasm_env() { env "$@"; }
else
  BLOCKSIGHT_WASM_ROUTE=debian-build-std
  # rustup's proxies in ~/.cargo/bin would otherwise pick rustup's rustc, which has no rust-src.
  wasm_env() {
    env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO=/usr/bin/cargo \
      RUSTUP_TOOLCHAIN= RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort "$@"
  }
fi
export BLOCKSIGHT_WASM_ROUTE

# cargo for wasm32: `wasm_cargo clippy -p web-app` etc. The target is added unless the subcommand
# is one that takes none.
wasm_cargo() {
  local sub=$1; shift
  case "$sub" in
    fetch) wasm_env cargo fetch --target "$WASM_TARGET" "$@" ;;
    *) if [ "$BLOCKSIGHT_WASM_ROUTE" = debian-build-std ]; then
         wasm_env /usr/bin/cargo "$sub" --target "$WASM_TARGET" "$@"
       else
         cargo "$sub" --target "$WASM_TARGET" "$@"
       fi ;;
  esac
}

# The Python venv of the bindings' tests (scripts/setup.sh creates it).
export BLOCKSIGHT_VENV=${BLOCKSIGHT_VENV:-$HOME/.cache/blocksight/venv}

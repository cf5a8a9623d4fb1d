//! Exposes the build target triple to the manifest (`supported_targets`).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=SESSION_MANAGER_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}

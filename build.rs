//! With the `torch` feature, embeds libtorch's library folder as an rpath so every binary,
//! test and benchmark finds `libtorch_cpu.so` without `LD_LIBRARY_PATH`. torch-sys exports
//! that folder to dependents as `DEP_TCH_LIBTORCH_LIB` (its `links` key is "tch"), and the
//! crate sees it as `DRIFT_LIBTORCH_LIB`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if std::env::var_os("CARGO_FEATURE_TORCH").is_none() {
        return;
    }
    match std::env::var("DEP_TCH_LIBTORCH_LIB") {
        Ok(lib) => {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
            // Where `libtorch_cuda.so` is, for loading it on demand (see src/device.rs).
            println!("cargo:rustc-env=DRIFT_LIBTORCH_LIB={lib}");
        }
        Err(_) => println!(
            "cargo:warning=torch-sys did not report DEP_TCH_LIBTORCH_LIB; set LD_LIBRARY_PATH to libtorch's lib folder"
        ),
    }
}

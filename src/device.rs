//! Where libtorch runs (the MiniLM encoder and training): device choice (`cpu`, `cuda`, `cuda:N`, or the first GPU when
//! there is one) and the libtorch thread count.
//!
//! Rust links with `--as-needed`, so a binary that calls no CUDA symbol does not load
//! `libtorch_cuda.so` and libtorch reports no GPU. It is loaded here, on demand, from the
//! libtorch the crate was built against: on a machine without the CUDA libraries the
//! load fails and the CPU is used (or, when CUDA was asked for, the error says why).

use std::sync::OnceLock;

use crate::{Error, Result};

/// The device a run asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The first CUDA device when one is usable, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// A CUDA device by index (`cuda` is `cuda:0`).
    Cuda(usize),
}

impl std::str::FromStr for DeviceChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "unknown device {s:?} (expected auto, cpu, cuda or cuda:N)"
                    ))
                }),
        }
    }
}

/// Loads `libtorch_cuda.so` once; the error says why CUDA is unusable.
fn load_cuda() -> &'static std::result::Result<(), String> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED.get_or_init(|| {
        let dir = option_env!("DRIFT_LIBTORCH_LIB").unwrap_or("");
        let path = std::path::Path::new(dir).join("libtorch_cuda.so");
        // SAFETY: libtorch_cuda's initialisers only register CUDA kernels with libtorch,
        // which is already loaded; the library stays loaded for the life of the process.
        match unsafe { libloading::Library::new(&path) } {
            Ok(lib) => {
                std::mem::forget(lib);
                Ok(())
            }
            Err(e) => Err(format!("cannot load {}: {e}", path.display())),
        }
    })
}

/// Resolves a choice to a libtorch device.
pub fn resolve(choice: DeviceChoice) -> Result<tch::Device> {
    let cuda_count = || match load_cuda() {
        Ok(()) => Ok(tch::Cuda::device_count() as usize),
        Err(e) => Err(e.clone()),
    };
    match choice {
        DeviceChoice::Cpu => Ok(tch::Device::Cpu),
        DeviceChoice::Auto => Ok(match cuda_count() {
            Ok(n) if n > 0 => tch::Device::Cuda(0),
            _ => tch::Device::Cpu,
        }),
        DeviceChoice::Cuda(index) => match cuda_count() {
            Ok(n) if index < n => Ok(tch::Device::Cuda(index)),
            Ok(n) => Err(Error::Invalid(format!(
                "device cuda:{index} asked for, but libtorch sees {n} CUDA device(s)"
            ))),
            Err(e) => Err(Error::Invalid(format!(
                "device cuda:{index} asked for, but CUDA is unusable: {e}"
            ))),
        },
    }
}

/// The provenance name of a device: `cpu` or `cuda:N`.
pub fn name(device: tch::Device) -> String {
    match device {
        tch::Device::Cuda(n) => format!("cuda:{n}"),
        _ => "cpu".into(),
    }
}

/// Where and how libtorch computes on `device`, as caches and provenance record it (a
/// batched float computation's last bits depend on it): `cpu, 1 libtorch thread`,
/// `cuda:0, 2 libtorch threads`.
#[cfg(feature = "torch")]
pub fn computed_on(device: tch::Device) -> String {
    let threads = tch::get_num_threads();
    let device = match device {
        tch::Device::Cpu => "cpu".to_string(),
        tch::Device::Cuda(n) => format!("cuda:{n}"),
        other => format!("{other:?}").to_lowercase(),
    };
    let plural = if threads == 1 { "" } else { "s" };
    format!("{device}, {threads} libtorch thread{plural}")
}

/// Moves the variables of `vs` to `device`, or errors naming `who` when libtorch cannot
/// use it (where `VarStore::set_device` would panic: one tensor is tried first).
#[cfg(feature = "torch")]
pub fn move_store(vs: &mut tch::nn::VarStore, device: tch::Device, who: &str) -> Result<()> {
    let _probe = tch::Tensor::zeros([1], (tch::Kind::Float, tch::Device::Cpu))
        .f_to_device(device)
        .map_err(|e| Error::Invalid(format!("{who}: moving weights to {device:?}: {e}")))?;
    vs.set_device(device);
    Ok(())
}

/// Makes glibc keep freed memory for reuse instead of handing it back to the system.
///
/// By default every block above glibc's mmap threshold (128 KiB, raised as large blocks
/// are freed, at most 32 MiB) is unmapped when freed and trimmed from the heap, so each
/// batch's activations came back as fresh pages the kernel must fault in and zero: 14.6M
/// page faults in one seed of `cnn_s` on the portrait study. With the threshold fixed at
/// its maximum and no trimming: 3.3M, and its evaluation took 38 s instead of 49.5 s
/// (training, 130 s, is unchanged). Where memory comes from changes no value computed:
/// the matrix is byte-identical. A no-op outside glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation policy, at any time; no memory is
    // touched.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

/// Runs `f` with denormal floats flushed to zero on this thread (the FTZ and DAZ bits of
/// x86-64's MXCSR), restoring the mode afterwards, even on a panic; elsewhere it just runs
/// `f`.
///
/// For the gradients' norm ([`crate::train::optimise`]): a model that fits its batch has
/// gradients near 1e-20, whose squares are denormal, and each denormal result costs the
/// core a microcode assist: the norm of `mlp_l`'s gradients took 11 ms instead of 0.4 ms
/// (`benches/train_step.rs`, whose batch is fixed). Flushing drops squares below 1.2e-38
/// only, which move no float32 norm above ~1e-15: clipping, which scales only when the
/// norm reaches its bound, and so the weights, are unchanged. Work libtorch hands to other
/// threads (more than one intra-op thread) keeps their mode: the same values, more slowly.
pub fn without_denormals<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(target_arch = "x86_64")]
    {
        /// Restores the saved MXCSR when dropped.
        struct Restore(u32);
        impl Drop for Restore {
            fn drop(&mut self) {
                // SAFETY: loads the control word saved below, as it was.
                unsafe {
                    std::arch::asm!("ldmxcsr [{}]", in(reg) &self.0, options(nostack, readonly));
                }
            }
        }
        let mut saved = 0u32;
        // SAFETY: stores MXCSR into a local u32.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut saved, options(nostack));
        }
        let _restore = Restore(saved);
        // FTZ (bit 15): denormal results become zero; DAZ (bit 6): denormal inputs read
        // as zero. Exceptions stay masked and rounding stays to nearest.
        let flushing = saved | (1 << 15) | (1 << 6);
        // SAFETY: sets only the two flush bits of a valid control word.
        unsafe {
            std::arch::asm!("ldmxcsr [{}]", in(reg) &flushing, options(nostack, readonly));
        }
        f()
    }
    #[cfg(not(target_arch = "x86_64"))]
    f()
}

/// Sets libtorch's intra-op and inter-op thread counts. Results are bit-identical only
/// for the same count, so it is explicit and recorded in provenance.
pub fn set_threads(threads: u32) -> Result<()> {
    if threads == 0 {
        return Err(Error::Invalid("threads must be at least 1".into()));
    }
    tch::set_num_threads(threads as i32);
    Ok(())
}

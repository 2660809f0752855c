//! Every WGSL file of `shaders/`, compiled in, and the pipeline cache keyed by a readable
//! [`KernelKey`] (kernel name + its override constants, e.g. `lstm_step{IN_DIM=8,UNITS=64,WG=64}`).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// How a kernel's binding is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Read,
    ReadWrite,
    Uniform,
}

use Slot::{Read, ReadWrite, Uniform};

/// One shader file.
#[derive(Debug, Clone, Copy)]
pub struct ShaderFile {
    /// File stem in `shaders/`.
    pub name: &'static str,
    pub text: &'static str,
    /// Kernels have one `main` entry point and a binding list; libraries only define functions.
    pub(crate) slots: Option<&'static [Slot]>,
    /// Kernels that call a solver's rules library (prepended at compile time).
    pub needs_rules: bool,
    /// Kernels that call `shaders/numerics.wgsl` (exp_ref, sigmoid_ref, tanh_ref, is_nan_bits;
    /// prepended at compile time).
    pub uses_numerics: bool,
}

/// All shaders, one per file.
pub const SHADERS: &[ShaderFile] = &[
    ShaderFile {
        name: "dense",
        text: include_str!("../../shaders/dense.wgsl"),
        slots: Some(&[Read, Read, Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "dense_log_softmax",
        text: include_str!("../../shaders/dense_log_softmax.wgsl"),
        slots: Some(&[Read, Read, Read, ReadWrite, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: true,
    },
    ShaderFile {
        name: "conv1d",
        text: include_str!("../../shaders/conv1d.wgsl"),
        slots: Some(&[Read, Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: true,
    },
    ShaderFile {
        name: "embedding_gather",
        text: include_str!("../../shaders/embedding_gather.wgsl"),
        slots: Some(&[Read, Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "lstm_step",
        text: include_str!("../../shaders/lstm_step.wgsl"),
        slots: Some(&[Read, Read, Read, ReadWrite, ReadWrite, Read, Read, Uniform]),
        needs_rules: false,
        uses_numerics: true,
    },
    ShaderFile {
        name: "log_softmax",
        text: include_str!("../../shaders/log_softmax.wgsl"),
        slots: Some(&[Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: true,
    },
    ShaderFile {
        name: "attention",
        text: include_str!("../../shaders/attention.wgsl"),
        slots: Some(&[Read, Read, Read, ReadWrite, ReadWrite, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: true,
    },
    ShaderFile {
        name: "ensemble_mean",
        text: include_str!("../../shaders/ensemble_mean.wgsl"),
        slots: Some(&[Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "greedy_step",
        text: include_str!("../../shaders/greedy_step.wgsl"),
        slots: Some(&[Read, Read, Read, Read, ReadWrite, ReadWrite, Uniform]),
        needs_rules: true,
        uses_numerics: true,
    },
    ShaderFile {
        name: "beam_step",
        text: include_str!("../../shaders/beam_step.wgsl"),
        slots: Some(&[Read, Read, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite, Uniform]),
        needs_rules: true,
        uses_numerics: true,
    },
    ShaderFile {
        name: "single_predict",
        text: include_str!("../../shaders/single_predict.wgsl"),
        slots: Some(&[Read, Read, Read, Read, ReadWrite, Uniform]),
        needs_rules: true,
        uses_numerics: true,
    },
    ShaderFile {
        name: "fused_step",
        text: include_str!("../../shaders/fused_step.wgsl"),
        slots: Some(&[Read, Read, Read, ReadWrite, ReadWrite, Uniform]),
        needs_rules: true,
        uses_numerics: true,
    },
    ShaderFile {
        name: "reorder_rows",
        text: include_str!("../../shaders/reorder_rows.wgsl"),
        slots: Some(&[Read, Read, ReadWrite, Uniform]),
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "rules_check",
        text: include_str!("../../shaders/rules_check.wgsl"),
        slots: Some(&[Read, Read, Read, Read, ReadWrite, Uniform]),
        needs_rules: true,
        uses_numerics: false,
    },
    ShaderFile {
        name: "catalogue_rules",
        text: include_str!("../../shaders/catalogue_rules.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "numerics",
        text: include_str!("../../shaders/numerics.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "conv_asm_1x1u_rules",
        text: include_str!("../../shaders/conv_asm_1x1u_rules.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "conv_asm_bwd_wrw_1x1_rules",
        text: include_str!("../../shaders/conv_asm_bwd_wrw_1x1_rules.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "conv_asm_bwd_wrw_3x3_rules",
        text: include_str!("../../shaders/conv_asm_bwd_wrw_3x3_rules.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
    ShaderFile {
        name: "conv_ocl_direct_fwd_rules",
        text: include_str!("../../shaders/conv_ocl_direct_fwd_rules.wgsl"),
        slots: None,
        needs_rules: false,
        uses_numerics: false,
    },
];

/// The longest prefix a solver's WGSL rules library takes (its `const SOLVER_MAX_LEN: u32 = Nu;`),
/// read from the library's text; None for an unknown library or one without the constant.
pub fn rules_max_len(library: &str) -> Option<usize> {
    let text = shader(library).ok()?.text;
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("const SOLVER_MAX_LEN"))?;
    let value = line
        .split('=')
        .nth(1)?
        .trim()
        .trim_end_matches(';')
        .trim()
        .trim_end_matches('u');
    value.parse().ok()
}

/// The shader file named `name`.
pub fn shader(name: &str) -> Result<&'static ShaderFile> {
    SHADERS
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::Gpu(format!("no shader '{name}' in shaders/")))
}

/// A compiled kernel: shader + rules library + override constants.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub kernel: &'static str,
    /// The solver rules library prepended (for `greedy_step`, `rules_check`).
    pub rules: Option<&'static str>,
    /// Override constants, sorted by name; booleans as 0/1.
    pub constants: Vec<(&'static str, u32)>,
    /// Weights stored as f16 (the shader's `alias Weight = f32;` becomes f16).
    pub half: bool,
}

impl KernelKey {
    pub fn new(kernel: &'static str, constants: &[(&'static str, u32)]) -> KernelKey {
        let mut constants = constants.to_vec();
        constants.sort();
        KernelKey {
            kernel,
            rules: None,
            constants,
            half: false,
        }
    }

    /// The variant with f16 weights.
    pub fn with_half(mut self, half: bool) -> KernelKey {
        self.half = half;
        self
    }

    pub fn with_rules(mut self, rules: &'static str) -> KernelKey {
        self.rules = Some(rules);
        self
    }
}

impl fmt::Display for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kernel)?;
        if let Some(r) = self.rules {
            write!(f, "+{r}")?;
        }
        if self.half {
            write!(f, "+f16")?;
        }
        let c: Vec<String> = self.constants.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{{{}}}", c.join(","))
    }
}

/// The WGSL text of a kernel: the numerics library and its rules library (when it uses them)
/// followed by the kernel file.
pub fn kernel_source(kernel: &str, rules: Option<&str>) -> Result<String> {
    let file = shader(kernel)?;
    let mut text = String::new();
    if file.uses_numerics {
        text.push_str(shader("numerics")?.text);
        text.push('\n');
    }
    match (file.needs_rules, rules) {
        (true, Some(r)) => {
            text.push_str(shader(r)?.text);
            text.push('\n');
        }
        (true, None) => return Err(Error::Gpu(format!("kernel {kernel} needs a solver rules library"))),
        (false, _) => {}
    }
    text.push_str(file.text);
    Ok(text)
}

/// The f16-weight variant of a kernel's text: `enable f16;` first, `Weight` aliased to f16.
pub fn half_variant(kernel: &str, text: &str) -> Result<String> {
    const F32: &str = "alias Weight = f32;";
    if !text.contains(F32) {
        return Err(Error::Gpu(format!("kernel {kernel} has no f16 variant")));
    }
    Ok(format!("enable f16;\n{}", text.replace(F32, "alias Weight = f16;")))
}

/// Parses and validates WGSL text with naga (no device needed); errors name the shader.
pub fn validate_wgsl(name: &str, text: &str) -> Result<()> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(text)
        .map_err(|e| Error::Gpu(format!("shader {name}: {}", one_line_report(&e.emit_to_string(text)))))?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| Error::Gpu(format!("shader {name}: {}", one_line_report(&e.emit_to_string(text)))))?;
    Ok(())
}

/// naga's multi-line report as one line: its first line and where (`wgsl:LINE:COLUMN`).
fn one_line_report(report: &str) -> String {
    let first = report
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("invalid WGSL");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match report
        .lines()
        .find_map(|l| l.split_once("wgsl:").map(|(_, at)| at.trim().to_string()))
    {
        Some(at) => format!("{first} (at {at})"),
        None => first.to_string(),
    }
}

/// A compiled pipeline with its bind group layout.
pub(crate) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub key: KernelKey,
    pub workgroup: u32,
}

/// The pipeline cache of one device.
#[derive(Default)]
pub(crate) struct Registry {
    cache: Mutex<HashMap<KernelKey, Arc<Kernel>>>,
}

impl Registry {
    /// The pipeline of `key`, compiled by `compile` on first use (the context's
    /// [`GpuContext::kernel`](super::context::GpuContext::kernel) compiles with [`compile`]
    /// inside its error scopes).
    pub fn get(&self, key: &KernelKey, compile: impl FnOnce(&KernelKey) -> Result<Kernel>) -> Result<Arc<Kernel>> {
        if let Some(k) = self.cache.lock().ok().and_then(|c| c.get(key).cloned()) {
            return Ok(k);
        }
        let kernel = Arc::new(compile(key)?);
        if let Ok(mut c) = self.cache.lock() {
            c.insert(key.clone(), kernel.clone());
        }
        Ok(kernel)
    }

    /// Readable keys of every compiled pipeline.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .cache
            .lock()
            .map(|c| c.keys().map(|k| k.to_string()).collect())
            .unwrap_or_default();
        keys.sort();
        keys
    }
}

/// Compiles the pipeline of `key` on `device` (device errors surface in the caller's error
/// scopes).
pub(crate) fn compile(device: &wgpu::Device, key: &KernelKey) -> Result<Kernel> {
    let file = shader(key.kernel)?;
    let slots = file
        .slots
        .ok_or_else(|| Error::Gpu(format!("shader {} is a library, not a kernel", key.kernel)))?;
    let mut text = kernel_source(key.kernel, key.rules)?;
    if key.half {
        text = half_variant(key.kernel, &text)?;
    }
    let name = key.to_string();
    validate_wgsl(&name, &text)?;
    let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
        .iter()
        .enumerate()
        .map(|(i, slot)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match slot {
                    Read => wgpu::BufferBindingType::Storage { read_only: true },
                    ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    Uniform => wgpu::BufferBindingType::Uniform,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let constants: Vec<(&str, f64)> = key.constants.iter().map(|&(k, v)| (k, f64::from(v))).collect();
    let workgroup = key
        .constants
        .iter()
        .find(|(k, _)| *k == "WG")
        .map(|&(_, v)| v)
        .unwrap_or(64);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&name),
        source: wgpu::ShaderSource::Wgsl(text.as_str().into()),
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&name),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&name),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&name),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    });
    Ok(Kernel {
        pipeline,
        layout,
        key: key.clone(),
        workgroup,
    })
}

//! Each solver says how the GPU searches its configs (`Solver::gpu_search`), and what it says
//! exists: a rules library is a shader of `shaders/` the registry builds searches from; a table
//! solver's constraints hand the GPU a table. The expected forms are the README's solver table.
#![cfg(feature = "gpu")]

use tuneinfer::gpu::registry::rules_max_len;
use tuneinfer::solvers::{self, GpuSearch};

#[test]
fn every_solver_names_its_gpu_search_and_it_exists() {
    let expected = [
        ("ConvAsm1x1U", GpuSearch::Rules("conv_asm_1x1u_rules")),
        ("ConvAsm3x3U", GpuSearch::Table),
        ("ConvAsmBwdWrW1x1", GpuSearch::Rules("conv_asm_bwd_wrw_1x1_rules")),
        ("ConvAsmBwdWrW3x3", GpuSearch::Rules("conv_asm_bwd_wrw_3x3_rules")),
        ("ConvOclDirectFwd", GpuSearch::Rules("conv_ocl_direct_fwd_rules")),
        ("ConvOclDirectFwd1x1", GpuSearch::Table),
        ("ConvOclBwdWrW2<1>", GpuSearch::Table),
        ("ConvOclBwdWrW2<2>", GpuSearch::Table),
        ("ConvOclBwdWrW2<4>", GpuSearch::Table),
        ("ConvOclBwdWrW2<8>", GpuSearch::Table),
        ("ConvOclBwdWrW2<16>", GpuSearch::Table),
        ("ConvBinWinogradRxSf2x3", GpuSearch::Table),
        ("ConvBinWinogradRxSf3x2", GpuSearch::Table),
        ("ConvHipImplicitGemmGroupFwdXdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmGroupBwdXdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmGroupWrwXdlops", GpuSearch::Table),
        ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", GpuSearch::Table),
        ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", GpuSearch::Table),
        ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", GpuSearch::Table),
        ("ConvMlirIgemmFwd", GpuSearch::Table),
        ("ConvMlirIgemmBwd", GpuSearch::Table),
        ("ConvMlirIgemmWrW", GpuSearch::Table),
        ("ConvMlirIgemmFwdXdlops", GpuSearch::Table),
        ("ConvMlirIgemmBwdXdlops", GpuSearch::Table),
        ("ConvMlirIgemmWrWXdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmV4R1Fwd", GpuSearch::Table),
        ("ConvHipImplicitGemmV4R1WrW", GpuSearch::Table),
        ("ConvHipImplicitGemmV4R4Fwd", GpuSearch::Table),
        ("ConvHipImplicitGemmV4R4WrW", GpuSearch::Table),
        ("ConvHipImplicitGemmBwdDataV1R1", GpuSearch::Table),
        ("ConvHipImplicitGemmForwardV4R4Xdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm", GpuSearch::Table),
        ("ConvHipImplicitGemmForwardV4R5Xdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmWrwV4R4Xdlops", GpuSearch::Table),
        ("ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm", GpuSearch::Table),
        ("ConvHipImplicitGemmBwdDataV4R1Xdlops", GpuSearch::Table),
        ("ConvHipImplicitGemm3DGroupFwdXdlops", GpuSearch::Table),
        ("ConvHipImplicitGemm3DGroupBwdXdlops", GpuSearch::Table),
        ("ConvHipImplicitGemm3DGroupWrwXdlops", GpuSearch::Table),
    ];
    let all = solvers::all();
    assert_eq!(all.len(), expected.len(), "a solver was added: give it a line here");
    for (name, form) in expected {
        let solver = solvers::by_name(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(solver.gpu_search(), form, "{name}");
        let library = match form {
            GpuSearch::Rules(library) => library,
            GpuSearch::Table => "catalogue_rules",
            GpuSearch::Host => continue,
        };
        let shader = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("shaders/{library}.wgsl"));
        assert!(shader.is_file(), "{name}: {} missing", shader.display());
        assert!(
            rules_max_len(library).is_some_and(|n| n > 0),
            "{name}: the registry does not know {library}"
        );
    }
}

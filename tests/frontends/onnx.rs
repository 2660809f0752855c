//! ONNX networks to MIOpen problems (`tuneinfer::onnx`, `tuneinfer problems --onnx`).
//!
//! The graphs are built here with the same protobuf messages the reader decodes; every
//! expected line is derived by hand from the convolution arithmetic (ONNX's operator spec:
//! `out = floor((in + pad_begin + pad_end - dilation*(k-1) - 1) / stride) + 1`; ConvTranspose
//! `stride*(in-1) + output_padding + dilation*(k-1) + 1 - pads`) and MIOpen's log form
//! (`src/driver_arguments.cpp`, `ConvArgsForMIOpenDriver`: `-n -c -H -W -k -y -x -p -q -u -v -l
//! -j`, 3-D with `--in_d ... --spatial_dim 3`, then `-m conv|trans -g G -F dir -t 1`), never
//! from the program's output.

use prost::Message;
use tuneinfer::onnx::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use tuneinfer::onnx::{problems_from_bytes, Network, Options};
use tuneinfer::problem::{Direction, Layout, Precision};
use tuneinfer::Error;

// ---- A small graph builder.

/// A dimension of a graph input: fixed or symbolic.
#[derive(Clone, Copy)]
enum D {
    N(i64),
    S(&'static str),
}

fn value_info(name: &str, ty: DataType, dims: &[D]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            denotation: None,
            value: Some(match d {
                D::N(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                D::S(s) => tensor_shape_proto::dimension::Value::DimParam(s.to_string()),
            }),
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(ty as i32),
                shape: Some(TensorShapeProto { dim }),
            })),
        }),
        ..Default::default()
    }
}

fn fixed(dims: &[i64]) -> Vec<D> {
    dims.iter().map(|&d| D::N(d)).collect()
}

/// An initializer with dims only (no data: the reader must not need weights).
fn weights(name: &str, ty: DataType, dims: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(ty as i32),
        ..Default::default()
    }
}

/// An INT64 initializer with values.
fn ints(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Int64 as i32),
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

/// A FLOAT initializer with values (in raw_data, as exporters write them).
fn floats(name: &str, values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Float as i32),
        raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ..Default::default()
    }
}

fn a_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn a_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn a_str(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    }
}

fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(name.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

#[derive(Default)]
struct Graph {
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    inputs: Vec<ValueInfoProto>,
    value_info: Vec<ValueInfoProto>,
    opset: i64,
    ty: Option<DataType>,
}

impl Graph {
    fn new(input: &str, ty: DataType, dims: &[D]) -> Graph {
        Graph {
            inputs: vec![value_info(input, ty, dims)],
            opset: 17,
            ty: Some(ty),
            ..Default::default()
        }
    }

    /// A convolution `name` with weights `w` (dims), output `name`.
    fn conv(&mut self, name: &str, x: &str, w: &[i64], attrs: Vec<AttributeProto>) -> String {
        self.conv_op("Conv", name, x, w, attrs)
    }

    fn conv_op(&mut self, op: &str, name: &str, x: &str, w: &[i64], attrs: Vec<AttributeProto>) -> String {
        let wname = format!("{name}.weight");
        self.inits.push(weights(&wname, self.ty.unwrap_or(DataType::Float), w));
        self.nodes.push(node(op, name, &[x, &wname], &[name], attrs));
        name.to_string()
    }

    fn op(&mut self, op: &str, name: &str, inputs: &[&str], attrs: Vec<AttributeProto>) -> String {
        self.nodes.push(node(op, name, inputs, &[name], attrs));
        name.to_string()
    }

    fn bytes(&self) -> Vec<u8> {
        let model = ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(self.opset),
            }],
            producer_name: Some("tests/frontends/onnx.rs".into()),
            graph: Some(GraphProto {
                name: Some("test".into()),
                node: self.nodes.clone(),
                initializer: self.inits.clone(),
                input: self.inputs.clone(),
                value_info: self.value_info.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        model.encode_to_vec()
    }

    fn run(&self, options: &Options) -> tuneinfer::Result<Network> {
        problems_from_bytes(&self.bytes(), "test.onnx", options)
    }

    fn lines(&self, options: &Options) -> Vec<String> {
        let net = self.run(options).unwrap_or_else(|e| panic!("{e}"));
        net.lines().iter().map(|s| s.to_string()).collect()
    }
}

fn fwd() -> Options {
    Options::default()
}

fn train() -> Options {
    Options {
        training: true,
        ..Options::default()
    }
}

/// A 2-D line as MIOpen logs it.
#[allow(clippy::too_many_arguments)]
fn line2d(
    n: u64,
    c: u64,
    h: u64,
    w: u64,
    k: u64,
    f: (u64, u64),
    p: (u64, u64),
    s: (u64, u64),
    g: u64,
    dir: u64,
) -> String {
    format!(
        "conv -n {n} -c {c} -H {h} -W {w} -k {k} -y {} -x {} -p {} -q {} -u {} -v {} -l 1 -j 1 -m conv -g {g} -F {dir} -t 1",
        f.0, f.1, p.0, p.1, s.0, s.1
    )
}

// ---- 2-D, training.

/// Two convolutions: 3x3 stride 2 pad 1 on 32x32 gives 16x16 ((32+2-3)/2+1 = 16), then 1x1.
/// Training: no backward data for the first (its input is the network's input).
#[test]
fn two_d_forward_and_training() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[2, 3, 32, 32]));
    g.conv(
        "c1",
        "x",
        &[16, 3, 3, 3],
        vec![a_ints("pads", &[1, 1, 1, 1]), a_ints("strides", &[2, 2])],
    );
    g.op("Relu", "r1", &["c1"], vec![]);
    g.conv("c2", "r1", &[32, 16, 1, 1], vec![]);
    let f1 = line2d(2, 3, 32, 32, 16, (3, 3), (1, 1), (2, 2), 1, 1);
    let f2 = line2d(2, 16, 16, 16, 32, (1, 1), (0, 0), (1, 1), 1, 1);
    assert_eq!(g.lines(&fwd()), vec![f1.clone(), f2.clone()]);
    let b2 = line2d(2, 16, 16, 16, 32, (1, 1), (0, 0), (1, 1), 1, 2);
    let w1 = line2d(2, 3, 32, 32, 16, (3, 3), (1, 1), (2, 2), 1, 4);
    let w2 = line2d(2, 16, 16, 16, 32, (1, 1), (0, 0), (1, 1), 1, 4);
    let net = g.run(&train()).unwrap();
    assert_eq!(net.lines(), vec![f1.as_str(), &f2, &b2, &w1, &w2]);
    assert_eq!(net.convolutions, 2);
    assert_eq!(net.total, 5);
    assert_eq!(net.passed_through.get("Relu"), Some(&1));
    let p = &net.problems[2].problem;
    assert_eq!((p.direction, p.c, p.k, p.out_h), (Direction::BackwardData, 16, 32, 16));
}

/// Depthwise (group = channels) and grouped convolutions: `-g`, `-k` all groups' channels.
#[test]
fn depthwise_and_grouped() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 32, 56, 56]));
    g.conv(
        "dw",
        "x",
        &[32, 1, 3, 3],
        vec![a_int("group", 32), a_ints("pads", &[1, 1, 1, 1])],
    );
    g.conv(
        "gc",
        "dw",
        &[64, 8, 3, 3],
        vec![
            a_int("group", 4),
            a_ints("pads", &[1, 1, 1, 1]),
            a_ints("strides", &[2, 2]),
        ],
    );
    assert_eq!(
        g.lines(&fwd()),
        vec![
            line2d(1, 32, 56, 56, 32, (3, 3), (1, 1), (1, 1), 32, 1),
            // (56+2-3)/2+1 = 28 out; input 56.
            line2d(1, 32, 56, 56, 64, (3, 3), (1, 1), (2, 2), 4, 1),
        ]
    );
    // The weights' channels times the groups must be the input's.
    let mut bad = Graph::new("x", DataType::Float, &fixed(&[1, 32, 8, 8]));
    bad.conv("gc", "x", &[64, 4, 3, 3], vec![a_int("group", 4)]);
    let e = bad.run(&fwd()).unwrap_err();
    assert_eq!(e.exit_code(), 4, "{e}");
    assert!(e.to_string().contains("'gc'"), "{e}");
}

/// ConvTranspose: `-m trans`, `-c` its input channels, `-k` its output ones (W is C x K/g);
/// 2*(16-1) + 1 + (4-1) - 2 = 32 out, which the next convolution sees.
#[test]
fn transposed() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 64, 16, 16]));
    g.conv_op(
        "ConvTranspose",
        "up",
        "x",
        &[64, 32, 4, 4],
        vec![a_ints("strides", &[2, 2]), a_ints("pads", &[1, 1, 1, 1])],
    );
    g.conv("c", "up", &[8, 32, 1, 1], vec![]);
    let up = "conv -n 1 -c 64 -H 16 -W 16 -k 32 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -t 1";
    assert_eq!(
        g.lines(&fwd()),
        vec![up.to_string(), line2d(1, 32, 32, 32, 8, (1, 1), (0, 0), (1, 1), 1, 1)]
    );
    let net = g.run(&fwd()).unwrap();
    // MIOpen runs it as the backward data of the convolution from the 32x32 image to 16x16.
    let p = &net.problems[0].problem;
    assert_eq!(
        (p.direction, p.c, p.in_h, p.k, p.out_h),
        (Direction::BackwardData, 32, 32, 64, 16)
    );

    // output_padding 1: 2*15 + 1 + 2 - 2 + 1 = 32; MIOpenDriver's -Y/-X.
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 64, 16, 16]));
    g.conv_op(
        "ConvTranspose",
        "up",
        "x",
        &[64, 32, 3, 3],
        vec![
            a_ints("strides", &[2, 2]),
            a_ints("pads", &[1, 1, 1, 1]),
            a_ints("output_padding", &[1, 1]),
        ],
    );
    g.conv("c", "up", &[8, 32, 1, 1], vec![]);
    assert_eq!(
        g.lines(&fwd()),
        vec![
            "conv -n 1 -c 64 -H 16 -W 16 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -t 1 -Y 1 -X 1"
                .to_string(),
            line2d(1, 32, 32, 32, 8, (1, 1), (0, 0), (1, 1), 1, 1),
        ]
    );
}

/// A grouped ConvTranspose (32 -> 8 channels, group 2) is written as the convolution MIOpen
/// runs: from its 8-channel 8x8 output to its 32-channel input, backward data.
#[test]
fn grouped_transposed_is_written_as_the_convolution_miopen_runs() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 32, 8, 8]));
    g.conv_op(
        "ConvTranspose",
        "up",
        "x",
        &[32, 4, 3, 3],
        vec![a_int("group", 2), a_ints("pads", &[1, 1, 1, 1])],
    );
    let net = g.run(&fwd()).unwrap();
    assert_eq!(
        net.lines(),
        vec![line2d(1, 8, 8, 8, 32, (3, 3), (1, 1), (1, 1), 2, 2).as_str()]
    );
    assert!(
        net.notes.iter().any(|n| n.contains("grouped transposed")),
        "{:?}",
        net.notes
    );
}

/// 3-D: 16x112x112 with a 3x7x7 filter, stride 1x2x2, pad 1x3x3: out 16x56x56.
#[test]
fn three_d() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[2, 3, 16, 112, 112]));
    g.conv(
        "c1",
        "x",
        &[64, 3, 3, 7, 7],
        vec![a_ints("strides", &[1, 2, 2]), a_ints("pads", &[1, 3, 3, 1, 3, 3])],
    );
    g.conv("c2", "c1", &[64, 64, 1, 1, 1], vec![]);
    assert_eq!(
        g.lines(&fwd()),
        vec![
            "conv -n 2 -c 3 --in_d 16 -H 112 -W 112 -k 64 --fil_d 3 -y 7 -x 7 --pad_d 1 -p 3 -q 3 --conv_stride_d 1 \
             -u 2 -v 2 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1 -t 1",
            "conv -n 2 -c 64 --in_d 16 -H 56 -W 56 -k 64 --fil_d 1 -y 1 -x 1 --pad_d 0 -p 0 -q 0 --conv_stride_d 1 \
             -u 1 -v 1 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1 -t 1",
        ]
    );
    let net = g.run(&fwd()).unwrap();
    assert!(net.problems[0].problem.is_3d());
}

/// 1-D as PyTorch hands it to MIOpen: H = 1 with filter, stride, dilation 1 and pad 0 in front.
/// (3000 + 2 - 3)/2 + 1 = 1500; then a dilated one, (1500 + 4 - 2*2 - 1)/1 + 1 = 1500.
#[test]
fn one_d_is_two_d_with_h_1() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[4, 80, 3000]));
    g.conv(
        "c1",
        "x",
        &[256, 80, 3],
        vec![a_ints("pads", &[1, 1]), a_ints("strides", &[2])],
    );
    g.conv(
        "c2",
        "c1",
        &[256, 256, 3],
        vec![a_ints("pads", &[2, 2]), a_ints("dilations", &[2])],
    );
    assert_eq!(
        g.lines(&fwd()),
        vec![
            "conv -n 4 -c 80 -H 1 -W 3000 -k 256 -y 1 -x 3 -p 0 -q 1 -u 1 -v 2 -l 1 -j 1 -m conv -g 1 -F 1 -t 1",
            "conv -n 4 -c 256 -H 1 -W 1500 -k 256 -y 1 -x 3 -p 0 -q 2 -u 1 -v 1 -l 1 -j 2 -m conv -g 1 -F 1 -t 1",
        ]
    );
}

/// The data type comes from the input tensor (FLOAT16: convfp16); --precision overrides it.
#[test]
fn fp16_and_the_precision_override() {
    let mut g = Graph::new("x", DataType::Float16, &fixed(&[8, 64, 28, 28]));
    g.conv("c", "x", &[128, 64, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    let fp16 = "convfp16 -n 8 -c 64 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1";
    assert_eq!(g.lines(&fwd()), vec![fp16]);
    let bf16 = Options {
        precision: Some(Precision::Bf16),
        ..Options::default()
    };
    assert_eq!(g.lines(&bf16), vec![fp16.replace("convfp16", "convbfp16")]);
    assert_eq!(g.run(&bf16).unwrap().problems[0].problem.precision, Precision::Bf16);
    // A double input has no MIOpen convolution here: an error that names --precision.
    let mut d = Graph::new("x", DataType::Double, &fixed(&[1, 4, 8, 8]));
    d.conv("c", "x", &[4, 4, 1, 1], vec![]);
    let e = d.run(&fwd()).unwrap_err();
    assert!(e.to_string().contains("--precision"), "{e}");
}

/// NHWC: the same sizes (MIOpen's log keeps the NCHW order) with the three layout flags.
#[test]
fn channels_last() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 16, 8, 8]));
    g.conv("c", "x", &[16, 16, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    let nhwc = Options {
        layout: Layout::Nhwc,
        ..Options::default()
    };
    let net = g.run(&nhwc).unwrap();
    assert_eq!(
        net.lines(),
        vec![
            "conv -n 1 -c 16 -H 8 -W 8 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC \
             --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 1 -t 1"
        ]
    );
    assert_eq!(net.problems[0].problem.layout, Layout::Nhwc);
}

/// auto_pad SAME_UPPER: 224 with a 3x3 stride 2 gives 112, total padding (112-1)*2+3-224 = 1,
/// all at the end: asymmetric, so the input is padded to 225 and the convolution pads 0
/// ((225-3)/2+1 = 112). Stride 1 pads 1 on both sides. Explicit pads begin 0 / end 2 in H: the
/// input is 12 high with pad 0; W's 1/1 stays.
#[test]
fn same_and_asymmetric_padding() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 3, 224, 224]));
    g.conv(
        "s2",
        "x",
        &[32, 3, 3, 3],
        vec![a_str("auto_pad", "SAME_UPPER"), a_ints("strides", &[2, 2])],
    );
    g.conv("s1", "s2", &[32, 32, 3, 3], vec![a_str("auto_pad", "SAME_LOWER")]);
    let net = g.run(&fwd()).unwrap();
    assert_eq!(
        net.lines(),
        vec![
            line2d(1, 3, 225, 225, 32, (3, 3), (0, 0), (2, 2), 1, 1).as_str(),
            &line2d(1, 32, 112, 112, 32, (3, 3), (1, 1), (1, 1), 1, 1),
        ]
    );
    assert_eq!(net.notes.len(), 1, "{:?}", net.notes);
    assert!(
        net.notes[0].contains("'s2'") && net.notes[0].contains("asymmetric"),
        "{:?}",
        net.notes
    );

    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 8, 10, 10]));
    g.conv("a", "x", &[8, 8, 3, 3], vec![a_ints("pads", &[0, 1, 2, 1])]);
    g.conv("b", "a", &[8, 8, 1, 1], vec![]);
    assert_eq!(
        g.lines(&fwd()),
        vec![
            line2d(1, 8, 12, 10, 8, (3, 3), (0, 1), (1, 1), 1, 1),
            // (10 + 0 + 2 - 3) + 1 = 10 high, (10 + 2 - 3) + 1 = 10 wide.
            line2d(1, 8, 10, 10, 8, (1, 1), (0, 0), (1, 1), 1, 1),
        ]
    );
}

/// A symbolic batch needs --batch (a usage error naming it, exit 2); with it, `-n` is it. A
/// fixed batch is replaced, said in a note.
#[test]
fn symbolic_batch() {
    let mut g = Graph::new("x", DataType::Float, &[D::S("N"), D::N(3), D::N(32), D::N(32)]);
    g.conv("c", "x", &[8, 3, 3, 3], vec![]);
    let e = g.run(&fwd()).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("--batch"), "{e}");
    let b = Options {
        batch: Some(64),
        ..Options::default()
    };
    assert_eq!(
        g.lines(&b),
        vec![line2d(64, 3, 32, 32, 8, (3, 3), (0, 0), (1, 1), 1, 1)]
    );

    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 3, 32, 32]));
    g.conv("c", "x", &[8, 3, 3, 3], vec![]);
    let net = g.run(&b).unwrap();
    assert_eq!(
        net.lines(),
        vec![line2d(64, 3, 32, 32, 8, (3, 3), (0, 0), (1, 1), 1, 1).as_str()]
    );
    assert!(
        net.notes[0].contains("batch 1 replaced by --batch 64"),
        "{:?}",
        net.notes
    );
}

// ---- Shapes through the other ops.

/// Resize by scales (8 -> 16), Concat (16 + 16 channels), Split (32 -> 8 + 24), Pad (input
/// pads 1 each side: 16 -> 18), MaxPool 3x3 stride 2 ((18-3)/2+1 = 8), Transpose of an NHWC
/// input, Reshape through Shape/Gather/Concat, Flatten + Gemm after the last convolution.
#[test]
fn shapes_through_the_other_ops() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 8, 8, 16]));
    g.op("Transpose", "t", &["x"], vec![a_ints("perm", &[0, 3, 1, 2])]); // 1x16x8x8
    g.inits.push(floats("scales", &[1.0, 1.0, 2.0, 2.0]));
    g.nodes.push(node(
        "Resize",
        "up",
        &["t", "", "scales"],
        &["up"],
        vec![a_str("mode", "nearest")],
    ));
    g.op("Sigmoid", "sg", &["up"], vec![]);
    g.op("Concat", "cat", &["up", "sg"], vec![a_int("axis", 1)]); // 1x32x16x16
    g.inits.push(ints("split", &[8, 24]));
    g.nodes.push(node(
        "Split",
        "sp",
        &["cat", "split"],
        &["s8", "s24"],
        vec![a_int("axis", 1)],
    ));
    g.inits.push(ints("pads", &[0, 0, 1, 1, 0, 0, 1, 1]));
    g.op("Pad", "pad", &["s8", "pads"], vec![]); // 1x8x18x18
    g.op(
        "MaxPool",
        "mp",
        &["pad"],
        vec![a_ints("kernel_shape", &[3, 3]), a_ints("strides", &[2, 2])],
    ); // 8x8
    g.conv("c1", "mp", &[4, 8, 1, 1], vec![]);
    // A reshape of x.view(x.size(0), 4, 8, 8): Shape, Gather, Unsqueeze, Concat.
    g.op("Shape", "shape", &["c1"], vec![]);
    g.inits.push(ints("zero", &[0]));
    g.nodes
        .push(node("Gather", "g0", &["shape", "zero"], &["n"], vec![a_int("axis", 0)]));
    g.inits.push(ints("rest", &[2, 2, 64]));
    g.op("Concat", "newshape", &["n", "rest"], vec![a_int("axis", 0)]);
    g.op("Reshape", "rs", &["c1", "newshape"], vec![]); // 1x2x2x64
    g.conv("c2", "rs", &[2, 2, 1, 1], vec![]);
    g.conv("c3", "s24", &[24, 24, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    g.op("Flatten", "fl", &["c3"], vec![]);
    g.inits.push(weights("fc", DataType::Float, &[6144, 10]));
    g.op("Gemm", "fc_out", &["fl", "fc"], vec![]);
    let net = g.run(&fwd()).unwrap();
    assert_eq!(
        net.lines(),
        vec![
            line2d(1, 8, 8, 8, 4, (1, 1), (0, 0), (1, 1), 1, 1).as_str(),
            &line2d(1, 2, 2, 64, 2, (1, 1), (0, 0), (1, 1), 1, 1),
            &line2d(1, 24, 16, 16, 24, (3, 3), (1, 1), (1, 1), 1, 1),
        ]
    );
    assert!(net.not_derived.is_empty(), "{:?}", net.not_derived);
    assert_eq!(net.passed_through.get("Gemm"), Some(&1));
}

/// A quantize-dequantize pair (QDQ export) before a convolution: DequantizeLinear's output is
/// the scale's type (FLOAT), so the problem is FP32 (`conv`), not the int8 in between.
#[test]
fn dequantized_input_is_float() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 4, 8, 8]));
    g.inits.push(floats("scale", &[0.1]));
    g.inits.push(TensorProto {
        name: Some("zp".into()),
        dims: vec![1],
        data_type: Some(DataType::Uint8 as i32),
        int32_data: vec![0],
        ..Default::default()
    });
    g.op("QuantizeLinear", "q", &["x", "scale", "zp"], vec![]);
    g.op("DequantizeLinear", "dq", &["q", "scale", "zp"], vec![]);
    g.conv("c", "dq", &[4, 4, 1, 1], vec![]);
    assert_eq!(
        g.lines(&fwd()),
        vec![line2d(1, 4, 8, 8, 4, (1, 1), (0, 0), (1, 1), 1, 1)]
    );
}

/// An op not known here, on a convolution's path: an error naming the node and its op and
/// saying to run shape inference; with value_info for its output, the walk goes on. After the
/// last convolution it is harmless.
#[test]
fn unknown_ops() {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 4, 8, 8]));
    let mut custom = node("Frobnicate", "frob", &["x"], &["y"], vec![]);
    custom.domain = Some("com.example".into());
    g.nodes.push(custom);
    g.conv("c", "y", &[4, 4, 3, 3], vec![]);
    let e = g.run(&fwd()).unwrap_err();
    assert_eq!(e.exit_code(), 4, "{e}");
    let text = e.to_string();
    for part in ["'frob' (Frobnicate)", "'c'", "shape inference"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    g.value_info
        .push(value_info("y", DataType::Float, &fixed(&[1, 4, 6, 6])));
    assert_eq!(
        g.lines(&fwd()),
        vec![line2d(1, 4, 6, 6, 4, (3, 3), (0, 0), (1, 1), 1, 1)]
    );

    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 4, 8, 8]));
    g.conv("c", "x", &[4, 4, 3, 3], vec![]);
    g.op("NonMaxSuppression", "nms", &["c"], vec![]);
    let net = g.run(&fwd()).unwrap();
    assert_eq!(net.problems.len(), 1);
    assert_eq!(net.not_derived.get("NonMaxSuppression"), Some(&1));
}

// ---- Weights given as graph inputs (issue 53).

/// How a graph gives its weights.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Weights {
    /// Initializers only (as exporters write them).
    Initializers,
    /// Initializers, listed as graph inputs too (IR version 3 and older).
    InitializersAndInputs,
    /// Graph inputs with fixed shapes and no initializer (shape analysis, weight streaming).
    InputsOnly,
}

/// A small network with every kind of parameter a convolutional network has, given as `how`:
/// a 3x3 stem (16 <- 3, stride 2, pad 1), BatchNormalization (scale, bias, mean, variance), a
/// layer scale of shape [16, 1, 1] multiplied in (as ConvNeXt's), a 1x1 conv whose weights are
/// [64, 16, 1, 1], a weight cast to FLOAT before its conv (a parameter computed from one), a
/// residual Add, a transposed 2x2 stride 2 convolution, a Gemm head. The data input is
/// `[batch, 3, 32, 32]`.
fn parameters_as(how: Weights, batch: D) -> Graph {
    let mut g = Graph::new("x", DataType::Float, &[batch, D::N(3), D::N(32), D::N(32)]);
    let params: Vec<(&str, Vec<i64>)> = vec![
        ("w1", vec![16, 3, 3, 3]),
        ("bn.scale", vec![16]),
        ("bn.bias", vec![16]),
        ("bn.mean", vec![16]),
        ("bn.var", vec![16]),
        ("gamma", vec![16, 1, 1]),
        ("w2", vec![64, 16, 1, 1]),
        ("w3", vec![16, 64, 1, 1]),
        ("w4", vec![16, 8, 2, 2]),
        ("fc", vec![8 * 32 * 32, 10]),
    ];
    for (name, dims) in &params {
        if how != Weights::InputsOnly {
            g.inits.push(weights(name, DataType::Float, dims));
        }
        if how != Weights::Initializers {
            g.inputs.push(value_info(name, DataType::Float, &fixed(dims)));
        }
    }
    // The half-precision copy of w3 is cast to FLOAT before its convolution.
    if how != Weights::InputsOnly {
        g.inits.push(weights("w3.half", DataType::Float16, &[16, 64, 1, 1]));
    }
    if how != Weights::Initializers {
        g.inputs
            .push(value_info("w3.half", DataType::Float16, &fixed(&[16, 64, 1, 1])));
    }
    let conv = |g: &mut Graph, name: &str, x: &str, w: &str, attrs: Vec<AttributeProto>| {
        g.nodes.push(node("Conv", name, &[x, w], &[name], attrs));
    };
    conv(
        &mut g,
        "c1",
        "x",
        "w1",
        vec![a_ints("pads", &[1, 1, 1, 1]), a_ints("strides", &[2, 2])],
    );
    g.op(
        "BatchNormalization",
        "bn",
        &["c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
        vec![],
    );
    g.op("Relu", "r1", &["bn"], vec![]);
    g.op("Mul", "ls", &["r1", "gamma"], vec![]);
    conv(&mut g, "c2", "ls", "w2", vec![]);
    g.nodes.push(node(
        "Cast",
        "w3.cast",
        &["w3.half"],
        &["w3.float"],
        vec![a_int("to", 1)],
    ));
    conv(&mut g, "c3", "c2", "w3.float", vec![]);
    g.op("Add", "res", &["c3", "ls"], vec![]);
    g.nodes.push(node(
        "ConvTranspose",
        "up",
        &["res", "w4"],
        &["up"],
        vec![a_ints("strides", &[2, 2])],
    ));
    g.op("Flatten", "fl", &["up"], vec![]);
    g.op("Gemm", "head", &["fl", "fc"], vec![]);
    g
}

/// The problems of [`parameters_as`] derived by hand, at batch `n`: c1 3x3/2 pad 1 on 32 gives
/// 16 ((32+2-3)/2+1); c2 and c3 are 1x1 on 16x16; the transposed 2x2/2 gives 32x32 from 16
/// channels to 8 (W is [16, 8, 2, 2]). Training: backward data for all but c1 (its input is
/// the network's), backward weights for all.
fn parameters_lines(n: u64, training: bool) -> Vec<String> {
    let c1 = |d| line2d(n, 3, 32, 32, 16, (3, 3), (1, 1), (2, 2), 1, d);
    let c2 = |d| line2d(n, 16, 16, 16, 64, (1, 1), (0, 0), (1, 1), 1, d);
    let c3 = |d| line2d(n, 64, 16, 16, 16, (1, 1), (0, 0), (1, 1), 1, d);
    let up = |d| {
        format!("conv -n {n} -c 16 -H 16 -W 16 -k 8 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F {d} -t 1")
    };
    let mut lines = vec![c1(1), c2(1), c3(1), up(1)];
    if training {
        lines.extend([c2(2), c3(2), up(2), c1(4), c2(4), c3(4), up(4)]);
    }
    lines
}

/// Weights given as graph inputs, with or without initializers, give the problems the same
/// graph gives with initializers: inference and training, the batch fixed or symbolic, with
/// and without --batch. --batch replaces the data input's batch only; the [64, 16, 1, 1]
/// weights keep their 64 (before, --batch 32 made them [32, 16, 1, 1] and the model was
/// refused), the [16, 1, 1] layer scale its 16.
#[test]
fn weights_as_graph_inputs_give_the_same_problems() {
    for how in [
        Weights::Initializers,
        Weights::InitializersAndInputs,
        Weights::InputsOnly,
    ] {
        for training in [false, true] {
            let fixed_batch = parameters_as(how, D::N(2));
            let symbolic = parameters_as(how, D::S("batch"));
            let opts = |batch| Options {
                batch,
                training,
                ..Options::default()
            };
            let what = format!("{how:?}, training {training}");
            assert_eq!(fixed_batch.lines(&opts(None)), parameters_lines(2, training), "{what}");
            for batch in [1, 32, 64] {
                assert_eq!(
                    fixed_batch.lines(&opts(Some(batch))),
                    parameters_lines(batch, training),
                    "{what}, --batch {batch}"
                );
                assert_eq!(
                    symbolic.lines(&opts(Some(batch))),
                    parameters_lines(batch, training),
                    "{what}, symbolic, --batch {batch}"
                );
            }
            let net = fixed_batch.run(&opts(Some(32))).unwrap();
            assert!(
                net.notes
                    .iter()
                    .any(|n| n.contains("graph input 'x': its batch 2 replaced by --batch 32")),
                "{what}: {:?}",
                net.notes
            );
            assert!(
                !net.notes.iter().any(|n| n.contains("'w2': its batch")),
                "{what}: {:?}",
                net.notes
            );
            if how == Weights::InputsOnly {
                assert!(
                    net.notes
                        .iter()
                        .any(|n| n.contains("graph input 'w2' keeps its first dimension 64")),
                    "{:?}",
                    net.notes
                );
            }
        }
    }
}

/// Two data inputs with fixed batches, each feeding a convolution (a two-stream network), and
/// a weight input: --batch replaces both batches, not the weight's first dimension.
#[test]
fn several_data_inputs_all_carry_the_batch() {
    let mut g = Graph::new("rgb", DataType::Float, &fixed(&[1, 3, 16, 16]));
    g.inputs
        .push(value_info("flow", DataType::Float, &fixed(&[1, 2, 16, 16])));
    g.inputs.push(value_info("wf", DataType::Float, &fixed(&[8, 2, 3, 3])));
    g.conv("a", "rgb", &[8, 3, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    g.nodes.push(node(
        "Conv",
        "b",
        &["flow", "wf"],
        &["b"],
        vec![a_ints("pads", &[1, 1, 1, 1])],
    ));
    g.op("Concat", "cat", &["a", "b"], vec![a_int("axis", 1)]);
    g.conv("c", "cat", &[4, 16, 1, 1], vec![]);
    let b = Options {
        batch: Some(8),
        ..Options::default()
    };
    assert_eq!(
        g.lines(&b),
        vec![
            line2d(8, 3, 16, 16, 8, (3, 3), (1, 1), (1, 1), 1, 1),
            line2d(8, 2, 16, 16, 8, (3, 3), (1, 1), (1, 1), 1, 1),
            line2d(8, 16, 16, 16, 4, (1, 1), (0, 0), (1, 1), 1, 1),
        ]
    );
}

// ---- Stated shapes whose dimensions are expressions (issue 53).

/// A convolution whose input's shape comes only from value_info: an op not known here
/// produces it from the data input `[batch, 4, 8, 8]` (as a Reshape whose target is in a
/// missing external-data file leaves it to value_info).
fn stated_input(input_batch: D, stated: &[D]) -> Graph {
    let mut g = Graph::new("x", DataType::Float, &[input_batch, D::N(4), D::N(8), D::N(8)]);
    let mut custom = node("Frobnicate", "frob", &["x"], &["y"], vec![]);
    custom.domain = Some("com.example".into());
    g.nodes.push(custom);
    g.value_info.push(value_info("y", DataType::Float, stated));
    g.conv("c", "y", &[8, 4, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    g
}

fn batch(n: u64) -> Options {
    Options {
        batch: Some(n),
        ..Options::default()
    }
}

/// `torch.export` writes dims such as `2*batch` and `s0*2` (a decoder that runs on batch x
/// sources): they are evaluated in the batch, 2 x 32 = 64, never taken as the batch itself.
#[test]
fn expression_dims_are_evaluated_in_the_batch() {
    let rest = [D::N(4), D::N(8), D::N(8)];
    for (symbol, dim, want) in [
        ("batch", "batch", 32),
        ("batch", "2*batch", 64),
        ("s0", "s0*2", 64),
        ("s0", "2*s0 + 2", 66),
        ("s0", "(s0//2)", 16),
    ] {
        let mut stated = vec![D::S(dim)];
        stated.extend(rest);
        let g = stated_input(D::S(symbol), &stated);
        assert_eq!(
            g.lines(&batch(32)),
            vec![line2d(want, 4, 8, 8, 8, (3, 3), (1, 1), (1, 1), 1, 1)],
            "{dim}"
        );
    }
    // Also a symbolic dimension further in: [batch, 2*s0 ...] after a reshape of the batch
    // into channels; and the ONNX path's own Reshape with its target in an external file.
    let g = stated_input(D::S("s0"), &[D::N(1), D::S("4*s0"), D::N(8), D::N(8)]);
    let e = g.run(&batch(2)).unwrap_err();
    assert!(e.to_string().contains("input has 8 channels"), "{e}");
}

/// A Reshape whose target is in a missing external-data file: the rule cannot compute it, the
/// model states `[2*batch, 4, 8, 8]`: N = 64 at --batch 32 (ConvTasNet's decoder runs on batch
/// x sources; before, N was 32).
#[test]
fn a_reshape_with_its_target_missing_takes_the_stated_expression() {
    let mut g = Graph::new(
        "x",
        DataType::Float,
        &[D::S("batch"), D::N(2), D::N(4), D::N(8), D::N(8)],
    );
    g.inits.push(TensorProto {
        name: Some("target".into()),
        dims: vec![4],
        data_type: Some(DataType::Int64 as i32),
        data_location: Some(tuneinfer::onnx::proto::tensor_proto::DataLocation::External as i32),
        ..Default::default()
    });
    g.op("Reshape", "merge", &["x", "target"], vec![]);
    g.value_info.push(value_info(
        "merge",
        DataType::Float,
        &[D::S("2*batch"), D::N(4), D::N(8), D::N(8)],
    ));
    g.conv("dec", "merge", &[8, 4, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    assert_eq!(
        g.lines(&batch(32)),
        vec![line2d(64, 4, 8, 8, 8, (3, 3), (1, 1), (1, 1), 1, 1)]
    );
    // Without --batch: a usage error, as for the input's own batch.
    let e = g.run(&fwd()).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
}

/// A stated dimension in a symbol that is not the batch (ONNX shape inference's `unk__3`,
/// another input's length), or an expression not read here, or an unnamed one: refused, with
/// the node and the value named; never the batch.
#[test]
fn other_symbols_are_refused_naming_the_node() {
    for dim in ["unk__3", "2*seq", "batch*seq", "s0**2", ""] {
        let g = stated_input(D::S("batch"), &[D::S(dim), D::N(4), D::N(8), D::N(8)]);
        let e = g.run(&batch(32)).unwrap_err();
        assert_eq!(e.exit_code(), 4, "{dim}: {e}");
        let text = e.to_string();
        for part in ["'frob' (Frobnicate)", "'c'", "'y'", "dimension 0"] {
            assert!(text.contains(part), "{dim}: {part}: {text}");
        }
    }
}

/// A model exported at a fixed batch states its shapes at that batch: where --batch replaces
/// it, a stated fixed shape is not taken (it would give N = 1 silently); without --batch, or
/// at the same batch, it is.
#[test]
fn stated_shapes_of_a_replaced_batch_are_refused() {
    let g = stated_input(D::N(1), &fixed(&[1, 4, 8, 8]));
    let e = g.run(&batch(32)).unwrap_err();
    let text = e.to_string();
    for part in ["'frob'", "exported with (1)", "--batch 32"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let one = vec![line2d(1, 4, 8, 8, 8, (3, 3), (1, 1), (1, 1), 1, 1)];
    assert_eq!(g.lines(&fwd()), one);
    assert_eq!(g.lines(&batch(1)), one);
}

// ---- ResNet-50.

/// ResNet-50 (He et al. 2016, torchvision's `resnet50`): a 7x7/2 stem, a 3x3/2 max pool, then
/// bottleneck stages of 3, 4, 6 and 3 blocks of widths 64, 128, 256, 512 (outputs 4x), a 1x1
/// projection with the stage's stride on each first block. v1.5 (torchvision) puts the stride
/// on the 3x3, v1 on the first 1x1. Conv, BatchNormalization, Relu, Add, GlobalAveragePool,
/// Flatten, Gemm, as torch.onnx.export writes it; the batch symbolic.
fn resnet50(v15: bool) -> Graph {
    let mut g = Graph::new(
        "input",
        DataType::Float,
        &[D::S("batch"), D::N(3), D::N(224), D::N(224)],
    );
    let mut n = 0;
    let mut cbr = |g: &mut Graph, x: &str, cin: i64, cout: i64, k: i64, s: i64, relu: bool| -> String {
        n += 1;
        let p = k / 2;
        let c = g.conv(
            &format!("conv{n}"),
            x,
            &[cout, cin, k, k],
            vec![
                a_ints("kernel_shape", &[k, k]),
                a_ints("strides", &[s, s]),
                a_ints("pads", &[p, p, p, p]),
            ],
        );
        for part in ["scale", "bias", "mean", "var"] {
            g.inits
                .push(weights(&format!("bn{n}.{part}"), DataType::Float, &[cout]));
        }
        let bn = format!("bn{n}");
        let (s_, b_, m_, v_) = (
            format!("{bn}.scale"),
            format!("{bn}.bias"),
            format!("{bn}.mean"),
            format!("{bn}.var"),
        );
        g.op("BatchNormalization", &bn, &[&c, &s_, &b_, &m_, &v_], vec![]);
        if relu {
            g.op("Relu", &format!("relu{n}"), &[&bn], vec![])
        } else {
            bn
        }
    };
    let mut x = cbr(&mut g, "input", 3, 64, 7, 2, true);
    x = g.op(
        "MaxPool",
        "pool",
        &[&x],
        vec![
            a_ints("kernel_shape", &[3, 3]),
            a_ints("strides", &[2, 2]),
            a_ints("pads", &[1, 1, 1, 1]),
        ],
    );
    let mut cin = 64;
    for (stage, (blocks, width)) in [(3, 64), (4, 128), (6, 256), (3, 512)].into_iter().enumerate() {
        for b in 0..blocks {
            let stride = if b == 0 && stage > 0 { 2 } else { 1 };
            let (s1, s3) = if v15 { (1, stride) } else { (stride, 1) };
            let a = cbr(&mut g, &x, cin, width, 1, s1, true);
            let m = cbr(&mut g, &a, width, width, 3, s3, true);
            let o = cbr(&mut g, &m, width, width * 4, 1, 1, false);
            let short = if b == 0 {
                cbr(&mut g, &x, cin, width * 4, 1, stride, false)
            } else {
                x.clone()
            };
            let sum = g.op("Add", &format!("add{stage}_{b}"), &[&o, &short], vec![]);
            x = g.op("Relu", &format!("out{stage}_{b}"), &[&sum], vec![]);
            cin = width * 4;
        }
    }
    let gap = g.op("GlobalAveragePool", "gap", &[&x], vec![]);
    let fl = g.op("Flatten", "flatten", &[&gap], vec![a_int("axis", 1)]);
    g.inits.push(weights("fc.weight", DataType::Float, &[1000, 2048]));
    g.inits.push(weights("fc.bias", DataType::Float, &[1000]));
    g.op("Gemm", "fc", &[&fl, "fc.weight", "fc.bias"], vec![a_int("transB", 1)]);
    g
}

/// ResNet-50 v1.5's distinct convolutions at 224x224, derived from the architecture: (input
/// channels, input size, output channels, filter, stride). Stem 1; stage 1 (56x56): 64->64
/// 1x1, 64->64 3x3, 64->256 1x1 (the projection is the same shape), 256->64 1x1: 4; stages
/// 2-4 each: the first 1x1 on the previous stage's size, the strided 3x3, the 1x1 up, the
/// strided projection, the later blocks' 1x1 down and unstrided 3x3: 6. 1 + 4 + 3*6 = 23.
const RESNET50_V15: [(u64, u64, u64, u64, u64); 23] = [
    (3, 224, 64, 7, 2),
    (64, 56, 64, 1, 1),
    (64, 56, 64, 3, 1),
    (64, 56, 256, 1, 1),
    (256, 56, 64, 1, 1),
    (256, 56, 128, 1, 1),
    (128, 56, 128, 3, 2),
    (128, 28, 512, 1, 1),
    (256, 56, 512, 1, 2),
    (512, 28, 128, 1, 1),
    (128, 28, 128, 3, 1),
    (512, 28, 256, 1, 1),
    (256, 28, 256, 3, 2),
    (256, 14, 1024, 1, 1),
    (512, 28, 1024, 1, 2),
    (1024, 14, 256, 1, 1),
    (256, 14, 256, 3, 1),
    (1024, 14, 512, 1, 1),
    (512, 14, 512, 3, 2),
    (512, 7, 2048, 1, 1),
    (1024, 14, 2048, 1, 2),
    (2048, 7, 512, 1, 1),
    (512, 7, 512, 3, 1),
];

fn resnet_line(n: u64, (c, hw, k, f, s): (u64, u64, u64, u64, u64), dir: u64) -> String {
    line2d(n, c, hw, hw, k, (f, f), (f / 2, f / 2), (s, s), 1, dir)
}

/// 53 convolutions, 23 distinct shapes (v1.5), in the order they first appear; training adds
/// 22 backward-data problems (not the stem's: its input is the image) and 23 backward-weights.
#[test]
fn resnet50_v15_forward_and_training() {
    let g = resnet50(true);
    let b32 = Options {
        batch: Some(32),
        ..Options::default()
    };
    let net = g.run(&b32).unwrap();
    assert_eq!(net.convolutions, 53);
    assert_eq!(net.total, 53);
    let want: Vec<String> = RESNET50_V15.iter().map(|&s| resnet_line(32, s, 1)).collect();
    assert_eq!(net.lines(), want.iter().map(String::as_str).collect::<Vec<_>>());

    let training = Options {
        batch: Some(32),
        training: true,
        ..Options::default()
    };
    let net = g.run(&training).unwrap();
    assert_eq!(net.total, 53 * 3 - 1);
    let mut want: Vec<String> = RESNET50_V15.iter().map(|&s| resnet_line(32, s, 1)).collect();
    want.extend(RESNET50_V15[1..].iter().map(|&s| resnet_line(32, s, 2)));
    want.extend(RESNET50_V15.iter().map(|&s| resnet_line(32, s, 4)));
    assert_eq!(net.problems.len(), 68);
    assert_eq!(net.lines(), want.iter().map(String::as_str).collect::<Vec<_>>());
}

/// ResNet-50 v1 (the stride on the first 1x1): the strided 3x3 and the first 1x1 at the
/// previous size are gone, the strided 1x1 is new and the 3x3 is the later blocks': 20.
#[test]
fn resnet50_v1_has_20_distinct_shapes() {
    let net = resnet50(false)
        .run(&Options {
            batch: Some(32),
            ..Options::default()
        })
        .unwrap();
    assert_eq!(net.problems.len(), 20);
    let strided_1x1 = line2d(32, 256, 56, 56, 128, (1, 1), (0, 0), (2, 2), 1, 1);
    assert!(net.lines().contains(&strided_1x1.as_str()));
}

// ---- Bad input.

fn small_model() -> Vec<u8> {
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 3, 16, 16]));
    g.conv("c", "x", &[8, 3, 3, 3], vec![a_ints("pads", &[1, 1, 1, 1])]);
    g.op("Relu", "r", &["c"], vec![]);
    g.conv("c2", "r", &[8, 8, 1, 1], vec![]);
    g.bytes()
}

#[test]
fn not_onnx_truncated_and_unsupported_opsets_are_errors() {
    let run = |b: &[u8]| problems_from_bytes(b, "m.onnx", &fwd());
    for bad in [&b""[..], b"hello, world\n", b"\x08\x08", &[0xff; 64]] {
        let e = run(bad).unwrap_err();
        assert_eq!(e.exit_code(), 4, "{e}");
        assert!(e.to_string().starts_with("m.onnx: "), "{e}");
    }
    let whole = small_model();
    let e = run(&whole[..whole.len() / 2]).unwrap_err();
    assert_eq!(e.exit_code(), 4, "{e}");
    let mut old = Graph::new("x", DataType::Float, &fixed(&[1, 3, 16, 16]));
    old.conv("c", "x", &[8, 3, 3, 3], vec![]);
    old.opset = 3;
    let e = old.run(&fwd()).unwrap_err();
    assert!(e.to_string().contains("unsupported ONNX operator set 3"), "{e}");
    old.opset = 99;
    assert!(old.run(&fwd()).is_err());
}

/// Zero, negative and huge dimensions: an error, never a problem.
#[test]
fn bad_dimensions_are_errors() {
    for dims in [[1, 3, 0, 16], [1, 3, -5, 16], [1, 3, 3_000_000_000, 16]] {
        let mut g = Graph::new("x", DataType::Float, &fixed(&dims));
        g.conv("c", "x", &[8, 3, 3, 3], vec![]);
        let e = g.run(&fwd()).unwrap_err();
        assert_eq!(e.exit_code(), 4, "{dims:?}: {e}");
        assert!(e.to_string().contains("dimension"), "{e}");
    }
    // A filter larger than the input.
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 3, 2, 2]));
    g.conv("c", "x", &[8, 3, 3, 3], vec![]);
    assert!(g.run(&fwd()).unwrap_err().to_string().contains("empty"));
    // A Resize to a size past MIOpen's int.
    let mut g = Graph::new("x", DataType::Float, &fixed(&[1, 3, 64, 64]));
    g.inits.push(floats("scales", &[1.0, 1.0, 1e8, 1.0]));
    g.nodes
        .push(node("Resize", "up", &["x", "", "scales"], &["up"], vec![]));
    g.conv("c", "up", &[8, 3, 3, 3], vec![]);
    assert!(g.run(&fwd()).is_err());
}

/// Every prefix of a model and a few thousand byte-flipped copies: an answer or an error,
/// never a panic.
#[test]
fn truncated_and_mutated_models_never_panic() {
    let whole = small_model();
    for cut in 0..whole.len() {
        let _ = problems_from_bytes(&whole[..cut], "m.onnx", &fwd());
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let mut m = whole.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % m.len() as u64) as usize;
            m[i] = next() as u8;
        }
        let _ = tuneinfer::fuzzing::onnx_model(&m);
    }
}

/// The fuzz seed (`tuneinfer::fuzzing::onnx_seed`) reads, with the lines derived by hand: 3x3
/// SAME_UPPER stride 2 on 16 (total pad (8-1)*2+3-16 = 1: input 17, pad 0), Resize x2 (8 -> 16),
/// Concat (16 channels), ConvTranspose 16 -> 4 stride 2 pad 1 output padding 1
/// (2*15+1+2-2+1 = 32), Reshape to (N, 4, 1024), a 1-D grouped convolution.
#[test]
fn the_fuzz_seed_reads() {
    let net = problems_from_bytes(
        &tuneinfer::fuzzing::onnx_seed(),
        "seed.onnx",
        &Options {
            batch: Some(2),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(
        net.lines(),
        vec![
            line2d(2, 3, 17, 17, 8, (3, 3), (0, 0), (2, 2), 1, 1).as_str(),
            "conv -n 2 -c 16 -H 16 -W 16 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -t 1 -Y 1 -X 1",
            "conv -n 2 -c 4 -H 1 -W 1024 -k 4 -y 1 -x 3 -p 0 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 2 -F 1 -t 1",
        ]
    );
    assert_eq!(tuneinfer::fuzzing::onnx_model(&tuneinfer::fuzzing::onnx_seed()), Ok(()));

    // The same with its weights as graph inputs, and one more convolution on a stated
    // [2*N, 4, 1024]: N = 2 x 2 = 4 there, 2 everywhere else.
    let inputs = tuneinfer::fuzzing::onnx_seed_inputs();
    let lines: Vec<String> = problems_from_bytes(
        &inputs,
        "seed-inputs.onnx",
        &Options {
            batch: Some(2),
            ..Options::default()
        },
    )
    .unwrap()
    .lines()
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut want: Vec<String> = net.lines().iter().map(|s| s.to_string()).collect();
    want.push("conv -n 4 -c 4 -H 1 -W 1024 -k 4 -y 1 -x 3 -p 0 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1".into());
    assert_eq!(lines, want);
    assert_eq!(tuneinfer::fuzzing::onnx_model(&inputs), Ok(()));
}

/// Writes the fuzz seed to `$TUNEINFER_ONNX_SEED` (`tools/fuzz.sh onnx_model`).
#[test]
#[ignore]
fn write_fuzz_seed() {
    let path = std::env::var("TUNEINFER_ONNX_SEED").expect("TUNEINFER_ONNX_SEED");
    for (i, seed) in tuneinfer::fuzzing::onnx_seeds().iter().enumerate() {
        let file = if i == 0 { path.clone() } else { format!("{path}.{i}") };
        std::fs::write(file, seed).unwrap();
    }
}

// ---- The command line.

fn tuneinfer(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .output()
        .expect("runs tuneinfer")
}

#[test]
fn cli_problems_prints_lines_and_a_summary() {
    let dir = tempdir("cli");
    let path = dir.join("net.onnx");
    std::fs::write(&path, small_model()).unwrap();
    let p = path.to_str().unwrap();
    let out = tuneinfer(&["problems", "--onnx", p, "--training"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let f1 = line2d(1, 3, 16, 16, 8, (3, 3), (1, 1), (1, 1), 1, 1);
    let f2 = line2d(1, 8, 16, 16, 8, (1, 1), (0, 0), (1, 1), 1, 1);
    let b2 = line2d(1, 8, 16, 16, 8, (1, 1), (0, 0), (1, 1), 1, 2);
    let w1 = line2d(1, 3, 16, 16, 8, (3, 3), (1, 1), (1, 1), 1, 4);
    let w2 = line2d(1, 8, 16, 16, 8, (1, 1), (0, 0), (1, 1), 1, 4);
    assert_eq!(stdout, [f1, f2, b2, w1, w2].join("\n") + "\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("2 convolution(s), 5 problem(s), 5 distinct; ops passed through: Relu 1"),
        "{stderr}"
    );

    // Each printed line is one 'batch --input' reads.
    for line in stdout.lines() {
        assert!(tuneinfer::problem::parse_line(line).is_ok(), "{line}");
    }

    // Errors: one line, an exit code, nothing on stdout.
    let garbage = dir.join("garbage.onnx");
    std::fs::write(&garbage, b"not a model").unwrap();
    let missing = dir.join("missing.onnx");
    let cases: [(&[&str], i32); 5] = [
        (&["problems", "--onnx", garbage.to_str().unwrap()], 4),
        (&["problems", "--onnx", missing.to_str().unwrap()], 3),
        (&["problems"], 2),
        (&["problems", "--onnx", p, "--precision", "fp64"], 2),
        (&["problems", "--onnx", p, "--layout", "CHWN"], 2),
    ];
    for (args, code) in cases {
        let out = tuneinfer(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1, "{args:?}");
    }
    let sym = dir.join("sym.onnx");
    let mut g = Graph::new("x", DataType::Float, &[D::S("N"), D::N(3), D::N(8), D::N(8)]);
    g.conv("c", "x", &[4, 3, 3, 3], vec![]);
    std::fs::write(&sym, g.bytes()).unwrap();
    let out = tuneinfer(&["problems", "--onnx", sym.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--batch"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `batch --onnx` predicts the network's problems as 'batch --input' would the printed lines.
#[test]
fn cli_batch_takes_the_network() {
    let dir = tempdir("batch");
    let path = dir.join("net.onnx");
    std::fs::write(&path, small_model()).unwrap();
    let out = tuneinfer(&[
        "batch",
        "--device",
        "cpu",
        "--system-db",
        "none",
        "--solver",
        "ConvAsm1x1U",
        "--onnx",
        path.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The 3x3 is not ConvAsm1x1U's (a bad line, exit 1); the 1x1 is predicted.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let f2 = line2d(1, 8, 16, 16, 8, (1, 1), (0, 0), (1, 1), 1, 1);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&format!("{f2}\tConvAsm1x1U\t1\t"))),
        "{stdout}"
    );
    assert!(stderr.contains("2 convolution(s)"), "{stderr}");
    let both = tuneinfer(&["batch", "--onnx", path.to_str().unwrap(), "--input", "x.txt"]);
    assert_eq!(both.status.code(), Some(2));
    // The network's options without --onnx, and a bad one with it: usage errors, before anything.
    let stray = tuneinfer(&["userdb", "--arch", "gfx906_60", "--batch", "3"]);
    assert_eq!(stray.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&stray.stderr).contains("--batch applies to --onnx FILE only"));
    let bad = tuneinfer(&[
        "userdb",
        "--arch",
        "gfx906_60",
        "--onnx",
        path.to_str().unwrap(),
        "--layout",
        "CHWN",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--layout"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir(what: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tuneinfer-onnx-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

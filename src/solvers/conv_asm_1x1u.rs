//! ConvAsm1x1U (placeholder: being written)

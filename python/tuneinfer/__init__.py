"""tuneinfer: predicts MIOpen convolution kernel tuning parameters (the CLI's answers).

    import tuneinfer
    p = tuneinfer.Predictor("gfx906", "ConvAsm1x1U")          # the CLI's default model
    p.predict("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F")
    # [Prediction(rank=1, config='2,8,4,16,1,4,2,2', score=..., source='model')]
    p.predict("convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -F 1", beam=4, top=2)
    p.predict_batch([key1, key2], errors="return")              # failures as exceptions in place

Failures raise TuneinferError (also tuneinfer.Error) with the library's message; `.code` is the
CLI's exit code for it. The GIL is released while a model loads and while it predicts.
"""

from ._native import ABI_VERSION, Prediction, Predictor, TuneinferError, __version__

Error = TuneinferError

__all__ = ["ABI_VERSION", "Error", "Prediction", "Predictor", "TuneinferError", "__version__"]

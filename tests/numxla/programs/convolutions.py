"""JAX's "Generalized convolutions in JAX" notebook: jnp.convolve and
jax.scipy.signal.convolve / convolve2d (modes, a 2-D smoothing of a noisy
image), and lax's convolutions: lax.conv on NCHW/OIHW, conv_with_general_padding,
conv_general_dilated with padding strings and pairs, window strides,
lhs_dilation (transposed convolution) and rhs_dilation (atrous), dimension
numbers given as strings or from lax.conv_dimension_numbers, grouped and
depthwise convolutions (feature_group_count), 1-D and 3-D convolutions,
and gradients of a convolution."""


def main(jax):
    import numpy as np
    import jax.numpy as jnp
    import jax.scipy as jsp
    from jax import lax, random

    out = {}
    # 1-D convolution with jnp.convolve: smoothing a noisy signal
    key = random.PRNGKey(1701)
    x = jnp.linspace(0, 10, 50)
    y = jnp.sin(x) + 0.2 * random.normal(key, shape=(50,))
    window = jnp.ones(10) / 10
    y_smooth = jnp.convolve(y, window, mode="same")
    out["convolve_same"] = y_smooth[::7]
    out["convolve_modes"] = [jnp.convolve(jnp.arange(5.0), jnp.array([1.0, 2.0, 0.5]), mode=m)
                             for m in ("full", "same", "valid")]
    out["correlate"] = jnp.correlate(jnp.arange(5.0), jnp.array([1.0, 2.0, 0.5]), mode="full")

    # 2-D: smoothing a noisy image with a Gaussian kernel
    key1, key2 = random.split(key)
    image = jnp.zeros((16, 16)).at[4:12, 4:12].set(1.0)
    noisy_image = image + 0.25 * random.normal(key2, image.shape)
    xk = jnp.linspace(-3, 3, 7)
    window = jsp.stats.norm.pdf(xk) * jsp.stats.norm.pdf(xk[:, None])
    smooth_image = jsp.signal.convolve(noisy_image, window, mode="same")
    out["smooth_image"] = smooth_image[::3, ::3]
    out["convolve2d"] = [jsp.signal.convolve2d(jnp.arange(12.0).reshape(3, 4),
                                               jnp.array([[1.0, -1.0], [0.5, 2.0]]), mode=m)
                         for m in ("full", "same", "valid")]
    out["correlate2d"] = jsp.signal.correlate2d(jnp.arange(9.0).reshape(3, 3),
                                                jnp.array([[1.0, 0.0], [0.0, -1.0]]))

    # lax.conv: an edge detector and a circle in NCHW / OIHW layouts
    kernel = jnp.zeros((3, 3, 3, 3), dtype=jnp.float32)
    kernel += jnp.array([[1, 1, 0], [1, 0, -1], [0, -1, -1]])[:, :, jnp.newaxis, jnp.newaxis]
    img = jnp.zeros((1, 20, 20, 3), dtype=jnp.float32)
    for k in range(3):
        xx, yy = k * 3 + 5, 10
        img = img.at[0, xx:xx + 6, yy:yy + 6, k].set(1.0)
    out["kernel_shape"] = kernel.shape
    nchw = jnp.transpose(img, [0, 3, 1, 2])
    oihw = jnp.transpose(kernel, [3, 2, 0, 1])
    conv = lax.conv(nchw, oihw, (1, 1), "SAME")
    out["lax_conv"] = (conv.shape, conv[0, 0, 3:12, 8:12])
    out["lax_conv_valid_strided"] = lax.conv(nchw, oihw, (2, 2), "VALID")[0, 1, :4, 3:7]
    out["conv_general_padding"] = lax.conv_with_general_padding(
        nchw, oihw, (1, 1), ((2, 2), (2, 2)), (1, 1), (1, 1))[0, 2, 6:10, 10:14]

    # dimension numbers: NHWC images with HWIO kernels, three ways
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ("NHWC", "HWIO", "NHWC"))
    out["dimension_numbers"] = (tuple(dn.lhs_spec), tuple(dn.rhs_spec), tuple(dn.out_spec))
    nhwc = lax.conv_general_dilated(img, kernel, (1, 1), "SAME", (1, 1), (1, 1), dn)
    nhwc_str = lax.conv_general_dilated(img, kernel, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    out["nhwc"] = (nhwc.shape, nhwc[0, 8:12, 8:14, 0])
    out["nhwc_same_as_str"] = bool(jnp.allclose(nhwc, nhwc_str))
    out["nhwc_vs_nchw"] = bool(jnp.allclose(jnp.transpose(nhwc, [0, 3, 1, 2]), conv))
    out["valid_explicit"] = lax.conv_general_dilated(
        img, kernel, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), dn).shape
    out["strided"] = lax.conv_general_dilated(img, kernel, (2, 2), "SAME", (1, 1), (1, 1),
                                              dn)[0, 3:6, 4:8, 2]
    out["strided_valid_shape"] = lax.conv_general_dilated(
        img, kernel, (2, 2), "VALID", (1, 1), (1, 1), dn).shape
    # rhs_dilation: "atrous" convolutions
    atrous = lax.conv_general_dilated(img, kernel, (1, 1), ((0, 0), (0, 0)), (1, 1), (12, 12),
                                      dn)
    out["atrous"] = (atrous.shape, atrous[0, :, :, 0])
    # lhs_dilation: transposed convolutions
    tconv = lax.conv_general_dilated(img, kernel, (1, 1), ((0, 0), (0, 0)), (2, 2), (1, 1), dn)
    out["lhs_dilated"] = (tconv.shape, tconv[0, 18:22, 20:24, 1])
    tconv_same = lax.conv_general_dilated(img, kernel[::-1, ::-1], (1, 1), ((1, 1), (1, 1)),
                                          (2, 2), (1, 1), dn)
    out["lhs_dilated_pad"] = (tconv_same.shape, tconv_same[0, 18:22, 20:24, 0])
    out["conv_transpose"] = lax.conv_transpose(img, kernel, (2, 2), "SAME",
                                               dimension_numbers=("NHWC", "HWIO", "NHWC")
                                               )[0, 18:22, 20:24, 0]

    # 1-D and 3-D convolutions
    one_d = jnp.sin(jnp.linspace(0, 6, 16)).reshape(1, 16, 1)
    k1d = jnp.array([1.0, 0.0, -1.0]).reshape(3, 1, 1)
    dn1 = lax.conv_dimension_numbers(one_d.shape, k1d.shape, ("NWC", "WIO", "NWC"))
    out["conv_1d"] = lax.conv_general_dilated(one_d, k1d, (1,), "SAME", (1,), (1,), dn1)[0, :, 0]
    vol = jnp.arange(2 * 5 * 5 * 5, dtype=jnp.float32).reshape(1, 5, 5, 5, 2) / 100
    k3d = jnp.ones((2, 2, 2, 2, 1), dtype=jnp.float32)
    dn3 = lax.conv_dimension_numbers(vol.shape, k3d.shape, ("NHWDC", "HWDIO", "NHWDC"))
    out["conv_3d"] = lax.conv_general_dilated(vol, k3d, (1, 1, 1), "VALID", (1, 1, 1),
                                              (1, 1, 1), dn3)[0, 1, :, :, 0]

    # grouped and depthwise convolutions
    x4 = random.normal(key1, (2, 6, 6, 4))
    w_grouped = random.normal(key2, (3, 3, 2, 6))   # 2 groups: 4 -> 6 channels
    out["grouped"] = lax.conv_general_dilated(
        x4, w_grouped, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=2)[1, 2, :, :]
    w_depthwise = random.normal(key1, (3, 3, 1, 4))
    out["depthwise"] = lax.conv_general_dilated(
        x4, w_depthwise, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=4)[0, 1, :, :]
    out["batch_group"] = lax.conv_general_dilated(
        jnp.transpose(x4, (0, 3, 1, 2)), jnp.ones((2, 4, 2, 2)), (1, 1), "VALID",
        batch_group_count=2)[:, :, 0, 0]

    # gradients through a convolution, and the convolution under jit and vmap
    def loss(w, x):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.tanh(y) ** 2)
    gw, gx = jax.grad(loss, argnums=(0, 1))(w_grouped[:, :, :, :2].reshape(3, 3, 2, 2) * 0.3,
                                            x4[:, :, :, :2])
    out["grad_w"] = gw[:, :, 0, 1]
    out["grad_x"] = gx[0, :3, :3, 0]
    out["jit_vmap_conv"] = jax.jit(jax.vmap(lambda s: jnp.convolve(s, jnp.array([0.25, 0.5, 0.25]),
                                                                   mode="valid")))(
        jnp.arange(12.0).reshape(3, 4))
    out["np_input"] = lax.conv(np.ones((1, 1, 4, 4), np.float32),
                               np.ones((1, 1, 2, 2), np.float32), (1, 1), "VALID")
    return out

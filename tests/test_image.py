"""core.image.resize and scale_and_translate.

Oracles: jax 0.10.2's jax.image values, recorded once with bench/.venv-jax for the image `_img`
below (JAX_IMAGE); hand-derived cases (upsampling a ramp linearly gives the ramp sampled at the
half-pixel-centred positions; a constant image stays constant; nearest repeats pixels); and
gradients against central finite differences in float64.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import image


def _img(shape):
    """The deterministic test image the oracle values were computed for."""
    n = int(np.prod(shape))
    return np.sin(0.37 * np.arange(n) + 0.1 * np.arange(n) ** 1.3).astype(np.float32).reshape(shape)


# jax.image.resize(_img((5, 6)), shape, method, antialias=aa) keyed (method, shape, aa); 'batch' is
# resize(_img((2, 5, 6, 3)), (2, 3, 4, 3), 'linear'); 'sat_*' is scale_and_translate(_img((5, 6)),
# (4, 8), (0, 1), [0.7, 1.5], [0.3, -0.2], method) (cubic with antialias=False); 'nearest_int' is
# resize(arange(12, int32).reshape(3, 4), (5, 3), 'nearest').
JAX_IMAGE = {
    ('linear', (3, 4), True): [[-0.035098743, 0.04731421, 0.18752955, 0.27474385], [0.14781088, 0.22091894, 0.10422424, -0.12494368], [-0.21853723, -0.47145903, -0.29215008, 0.18349062]],
    ('linear', (3, 4), False): [[-0.0047360864, 0.19693057, 0.3641163, 0.3415515], [0.71790177, 0.9289804, 0.3135613, -0.60227734], [-0.052263595, -0.5142254, -0.44668993, 0.110682055]],
    ('linear', (7, 9), True): [[0, 0.22644314, 0.51639706, 0.77044016, 0.91649854, 0.977547, 0.8915503, 0.6664757, 0.46290025], [-0.060156472, -0.11782664, -0.1787279, -0.19165225, -0.15101267, -0.07996084, 0.028764192, 0.14009398, 0.22424257], [0.105731376, -0.03928936, -0.22509603, -0.38823974, -0.48124638, -0.5186897, -0.45957989, -0.3128544, -0.18090634], [0.63324416, 0.8025594, 0.96234256, 0.92421436, 0.6947527, 0.36731514, -0.062716104, -0.45825946, -0.7462951], [-0.53241104, -0.41585883, -0.23571746, 0.018638995, 0.2605009, 0.46543887, 0.57209915, 0.5374811, 0.476198], [-0.32831833, -0.41812685, -0.4994748, -0.46563244, -0.32152134, -0.12366815, 0.1251426, 0.33618966, 0.48503405], [0.5654875, 0.22867158, -0.21218637, -0.62835443, -0.86595017, -0.9614767, -0.80936724, -0.4632601, -0.15518029]],
    ('cubic', (3, 4), True): [[-0.014057449, 0.044448182, 0.17729448, 0.2561418], [0.11485364, 0.22429672, 0.10635513, -0.14278309], [-0.20835744, -0.49319926, -0.27889425, 0.22918448]],
    ('cubic', (3, 4), False): [[-0.030290768, 0.2294598, 0.43818483, 0.3928717], [0.69876224, 0.96516377, 0.32637194, -0.6510929], [0.00024338969, -0.59592605, -0.5491447, 0.12837401]],
    ('cubic', (7, 9), True): [[-0.027473534, 0.2216978, 0.59528637, 0.8839513, 1.0616134, 1.1081036, 1.0011125, 0.6970961, 0.45658377], [-0.09734373, -0.18258527, -0.2842597, -0.30399385, -0.2541547, -0.14662322, 0.008005689, 0.18471462, 0.29725334], [0.13943815, -0.05421572, -0.34400102, -0.56668633, -0.70063186, -0.7298071, -0.63633555, -0.39272988, -0.20227332], [0.6109659, 0.795964, 0.9896782, 0.950941, 0.7314936, 0.3783912, -0.064332835, -0.5131467, -0.78419465], [-0.7169968, -0.5774067, -0.30757275, 0.0377805, 0.37037626, 0.6339158, 0.77066886, 0.7011265, 0.5984625], [-0.40510368, -0.5167828, -0.6240322, -0.571362, -0.39622238, -0.13721728, 0.16923635, 0.4486347, 0.6083136], [0.7042346, 0.35666972, -0.18898432, -0.66677463, -0.9781026, -1.0829042, -0.93601704, -0.5131286, -0.17777206]],
    ('lanczos3', (3, 4), True): [[0.026509592, 0.034469645, 0.124496885, 0.21284282], [0.06005566, 0.18968116, 0.103457846, -0.13566798], [-0.20262355, -0.46874353, -0.22787365, 0.2795039]],
    ('lanczos3', (3, 4), False): [[-0.08679794, 0.15354766, 0.40823236, 0.4392708], [0.6980275, 0.9757227, 0.33837977, -0.66893226], [-0.05708479, -0.68188685, -0.5749634, 0.20175588]],
    ('lanczos3', (7, 9), True): [[-0.01140111, 0.23576768, 0.6929721, 0.9755493, 1.1529047, 1.1895329, 1.0807711, 0.6860694, 0.4343902], [-0.16093704, -0.25121775, -0.3768947, -0.36973116, -0.29118288, -0.14648792, 0.038109347, 0.27124938, 0.38570127], [0.23187514, 0.031947784, -0.35183558, -0.6158975, -0.80330735, -0.8757031, -0.8214694, -0.5188469, -0.31811026], [0.6004252, 0.78164065, 1.0163567, 0.95567566, 0.73787695, 0.38429904, -0.0405579, -0.5421168, -0.780964], [-0.77567625, -0.61007875, -0.22064129, 0.17795733, 0.54998034, 0.8202515, 0.94359225, 0.7662687, 0.6063503], [-0.43602112, -0.5724037, -0.74394286, -0.6838509, -0.49871773, -0.20822679, 0.1298222, 0.50003207, 0.6684639], [0.77923644, 0.46497297, -0.16822803, -0.64654815, -0.99505216, -1.1289954, -1.0386814, -0.552152, -0.23389538]],
    ('lanczos5', (3, 4), True): [[0.062401637, 0.02855543, 0.08094229, 0.17656344], [0.03712029, 0.1721072, 0.1010028, -0.12898748], [-0.19647864, -0.43206304, -0.1784961, 0.30078518]],
    ('lanczos5', (3, 4), False): [[-0.16778708, 0.10407484, 0.436344, 0.511816], [0.6981338, 1.0101323, 0.36994585, -0.6658892], [-0.10864512, -0.8217023, -0.6799765, 0.22524725]],
    ('lanczos5', (7, 9), True): [[0.030279132, 0.28522217, 0.77081007, 1.0584972, 1.121946, 1.2364513, 1.0876936, 0.6502887, 0.3888722], [-0.25365612, -0.33795267, -0.44676504, -0.41250706, -0.25331298, -0.10724138, 0.11005727, 0.3621442, 0.4750685], [0.31724125, 0.096630484, -0.35187614, -0.6709182, -0.8171996, -1.0046227, -0.9472307, -0.60880166, -0.39080325], [0.59914327, 0.77909, 1.0244236, 0.9822304, 0.68074495, 0.40715382, -0.0239277, -0.54540724, -0.78451014], [-0.7955801, -0.59525365, -0.12641947, 0.31247863, 0.62956923, 0.9765092, 1.0588189, 0.8110314, 0.6171501], [-0.4594505, -0.62410074, -0.8538765, -0.8276771, -0.5687761, -0.32967317, 0.04869561, 0.4960706, 0.6981631], [0.8253458, 0.5196505, -0.12759005, -0.6249323, -0.86951905, -1.1463047, -1.0558213, -0.5754683, -0.27098864]],
    ('area', (3, 4), True): [[-0.023733651, 0.08018398, 0.24986865, 0.29728565], [0.2035089, 0.30097532, 0.11100884, -0.17438865], [-0.16945048, -0.4891588, -0.32006058, 0.16189314]],
    ('area', (3, 4), False): [[-0.023733651, 0.08018398, 0.24986865, 0.29728565], [0.2035089, 0.30097532, 0.11100884, -0.17438865], [-0.16945048, -0.4891588, -0.32006058, 0.16189314]],
    ('area', (7, 9), True): [[0, 0.22644317, 0.45288628, 0.8339509, 0.9164986, 0.9990462, 0.87005115, 0.6664756, 0.46290028], [-0.0631643, -0.13504018, -0.20691602, -0.24632514, -0.20438838, -0.1624516, 0.015240036, 0.11377494, 0.21230967], [0.04242971, -0.14031143, -0.32305253, -0.59027094, -0.6223666, -0.6544622, -0.47775197, -0.29540563, -0.11305954], [0.63324416, 0.80255944, 0.97187465, 0.9146823, 0.6947526, 0.474823, -0.1702238, -0.45825967, -0.74629515], [-0.6722896, -0.56206894, -0.45184827, -0.017666463, 0.20839079, 0.43444788, 0.6910427, 0.6569699, 0.62289715], [-0.37300807, -0.45046636, -0.5279247, -0.44341078, -0.2943002, -0.1451897, 0.23527884, 0.37616172, 0.5170444], [0.5654875, 0.22867155, -0.10814433, -0.7323963, -0.8659502, -0.999504, -0.77133995, -0.4632599, -0.1551803]],
    ('nearest', (3, 4), True): [[0, 0.8339509, 0.9990462, 0.46290028], [0.63324416, 0.9146823, 0.474823, -0.74629515], [0.5654875, -0.7323963, -0.999504, -0.1551803]],
    ('nearest', (7, 9), True): [[0, 0.45288628, 0.45288628, 0.8339509, 0.9990462, 0.9990462, 0.87005115, 0.46290028, 0.46290028], [-0.105273835, -0.6467842, -0.6467842, -0.9665091, -0.9367834, -0.9367834, -0.554634, 0.04524929, 0.04524929], [-0.105273835, -0.6467842, -0.6467842, -0.9665091, -0.9367834, -0.9367834, -0.554634, 0.04524929, 0.04524929], [0.63324416, 0.97187465, 0.97187465, 0.9146823, 0.474823, 0.474823, -0.1702238, -0.74629515, -0.74629515], [-0.9986728, -0.8077787, -0.8077787, -0.25075346, 0.4243541, 0.4243541, 0.9063592, 0.96519494, 0.96519494], [-0.9986728, -0.8077787, -0.8077787, -0.25075346, 0.4243541, 0.4243541, 0.9063592, 0.96519494, 0.96519494], [0.5654875, -0.10814433, -0.10814433, -0.7323963, -0.999504, -0.999504, -0.77133995, -0.1551803, -0.1551803]],
    ('cubic-pytorch', (7, 9), False): [[-0.03782103, 0.23297176, 0.64511293, 0.9070368, 1.120316, 1.150843, 1.0517619, 0.72312236, 0.45355245], [-0.1198033, -0.24182086, -0.38376412, -0.41600603, -0.37094322, -0.2261356, -0.060111526, 0.17921849, 0.32975468], [0.1851643, -0.02314987, -0.34588403, -0.55869263, -0.7391201, -0.77702343, -0.7079688, -0.45904136, -0.25181982], [0.6038492, 0.8079212, 1.000698, 0.9669516, 0.74986404, 0.3540661, -0.035277646, -0.5187326, -0.7963014], [-0.7383065, -0.57557726, -0.24360177, 0.080876365, 0.45788276, 0.72316915, 0.82573533, 0.7277162, 0.5823078], [-0.4969975, -0.618831, -0.7059861, -0.6309794, -0.41151205, -0.07967183, 0.2198363, 0.5410259, 0.7056672], [0.75299674, 0.38501287, -0.2144651, -0.65062445, -1.0277065, -1.1227921, -0.9965014, -0.5538717, -0.18607897]],
    ('cubic-pytorch', (3, 4), False): [[-0.05869479, 0.11711045, 0.34789768, 0.3841369], [0.71197575, 0.9859364, 0.3025407, -0.6384564], [-0.10274031, -0.6201181, -0.4771595, 0.19780733]],
    'batch': [[[[0.014779478, 0.27748024, 0.48498705], [0.24506244, -0.007818341, -0.25966847], [-0.317054, -0.08296561, 0.18272783], [0.48696274, 0.2027019, -0.16932225]], [[-0.1922946, 0.09202151, 0.31397817], [0.091505334, -0.073761925, -0.18858542], [-0.031061202, 0.10483055, 0.17422234], [-0.032568008, -0.17912242, -0.21510774]], [[0.17127073, 0.05067399, -0.09236544], [-0.040448204, 0.028711125, 0.07209185], [-0.006275825, -0.05445612, -0.061634324], [0.069553904, 0.065898456, 0.016074046]]], [[[-0.05557227, -0.007504776, 0.04846516], [0.009630743, -0.035654433, -0.057606995], [0.023534272, 0.053269587, 0.045606464], [-0.121773735, -0.09107281, 0.011324376]], [[0.012901749, 0.07514334, 0.07792889], [-0.05494085, -0.023971088, 0.028513268], [0.034629792, -0.011298008, -0.04956657], [0.10284759, 0.12861887, 0.045180935]], [[-0.076041415, -0.18670687, -0.13940269], [0.07718991, -0.014149651, -0.09391841], [-0.026902929, 0.062257513, 0.09823212], [-0.21968934, -0.09466308, 0.116016805]]]],
    'sat_linear': [[-0.015791073, 0.17656924, 0.3707196, 0.5546838, 0.6555822, 0.69297475, 0.65809256, 0.49415445], [0.13481174, 0.02999852, -0.08040897, -0.19091152, -0.261039, -0.29529414, -0.28830254, -0.2051409], [-0.27588594, -0.13714576, 0.02208874, 0.19744706, 0.32399273, 0.39621022, 0.40516648, 0.29212832], [0.23962066, -0.07294342, -0.36734733, -0.6194491, -0.6769022, -0.6185525, -0.43118745, -0.10512059]],
    'sat_cubic': [[-0.00008503534, 0.31637853, 0.68632364, 0.96633434, 1.12464, 1.1371335, 0.9938488, 0.6416078], [0.047200345, -0.22859637, -0.5357303, -0.7448967, -0.83409965, -0.7914692, -0.61572284, -0.27959564], [-0.55989635, -0.37086263, -0.08480926, 0.22609673, 0.49411863, 0.6618701, 0.6989205, 0.537938], [0.6269472, 0.21558882, -0.29868332, -0.7315227, -0.9898473, -1.0303969, -0.83938533, -0.3807935]],
    'nearest_int': [[0, 2, 3], [0, 2, 3], [4, 6, 7], [8, 10, 11], [8, 10, 11]],
}

RESIZE_CASES = [k for k in JAX_IMAGE if isinstance(k, tuple)]


@pytest.mark.parametrize("method,shape,antialias", RESIZE_CASES, ids=[f"{m}-{s[0]}x{s[1]}-aa{int(a)}"
                                                                       for m, s, a in RESIZE_CASES])
def test_resize_matches_jax(method, shape, antialias):
    got = image.resize(_img((5, 6)), shape, method, antialias=antialias)
    assert got.shape == shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.float32(JAX_IMAGE[(method, shape, antialias)]),
                               rtol=2e-6, atol=2e-6)


def test_resize_batch_and_channels_match_jax():
    got = image.resize(_img((2, 5, 6, 3)), (2, 3, 4, 3), "bilinear")
    np.testing.assert_allclose(np.asarray(got), np.float32(JAX_IMAGE["batch"]), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("method,key,antialias", [("linear", "sat_linear", True), ("cubic", "sat_cubic", False)])
def test_scale_and_translate_matches_jax(method, key, antialias):
    got = image.scale_and_translate(_img((5, 6)), (4, 8), (0, 1), jnp.array([0.7, 1.5]), jnp.array([0.3, -0.2]),
                                    method, antialias=antialias)
    np.testing.assert_allclose(np.asarray(got), np.float32(JAX_IMAGE[key]), rtol=2e-6, atol=2e-6)


def test_nearest_keeps_integers():
    got = image.resize(np.arange(12, dtype=np.int32).reshape(3, 4), (5, 3), "nearest")
    assert got.dtype == np.int32
    assert np.asarray(got).tolist() == JAX_IMAGE["nearest_int"]


def test_linear_upsampling_of_a_ramp_is_hand_derived():
    # input pixel i sits at i + 0.5; output pixel j of 2x upsampling at (j + 0.5) / 2 in input
    # units, i.e. it samples the ramp at t = (j + 0.5) / 2 - 0.5, clamped to the edge pixels
    n = 5
    got = np.asarray(image.resize(jnp.arange(float(n)) * 3.0 + 1.0, (2 * n,), "linear"))
    t = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, n - 1)
    np.testing.assert_allclose(got, 3.0 * t + 1.0, rtol=1e-6)
    # and in 2-D the same ramp along one axis, constant along the other
    ramp = np.tile(np.arange(float(n))[:, None], (1, 3))
    got2 = np.asarray(image.resize(ramp, (2 * n, 6), "bilinear"))
    np.testing.assert_allclose(got2, np.tile(t[:, None], (1, 6)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5", "area"])
@pytest.mark.parametrize("shape", [(3, 2), (9, 11)])
def test_constant_image_stays_constant(method, shape):
    got = np.asarray(image.resize(jnp.full((5, 6), 2.5), shape, method))
    np.testing.assert_allclose(got, np.full(shape, 2.5), rtol=1e-5)


def test_antialias_averages_when_downsampling():
    # halving [a, b, c, d] with a triangle widened to 2 pixels: each output is a weighted mean
    x = np.array([0.0, 4.0, 8.0, 12.0], np.float32)
    aa = np.asarray(image.resize(x, (2,), "linear", antialias=True))
    plain = np.asarray(image.resize(x, (2,), "linear", antialias=False))
    # plain linear samples at 0.5 and 2.5: the midpoints (2, 10); the wide triangle at the same
    # centres with weights (1, 3, 3, 1)/8 over the pixels it covers, renormalised at the edges
    np.testing.assert_allclose(plain, [2.0, 10.0], rtol=1e-6)
    np.testing.assert_allclose(aa, [(0 * 3 + 4 * 3 + 8 * 1) / 7, (4 * 1 + 8 * 3 + 12 * 3) / 7], rtol=1e-6)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3"])
def test_gradient_matches_finite_differences(rng, x64, method):
    x = rng.standard_normal((4, 5))
    probe = rng.standard_normal((3, 7))

    def f(x):
        return jnp.sum(image.resize(x, (3, 7), method) * probe)

    g = np.asarray(core.grad(f)(jnp.asarray(x)))
    eps, fd = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        fd[idx] = (float(f(jnp.asarray(x + d))) - float(f(jnp.asarray(x - d)))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_gradient_in_scale_and_translation(x64):
    x = jnp.asarray(_img((6,)).astype(np.float64))

    def f(s, t):
        return jnp.sum(image.scale_and_translate(x, (5,), (0,), s, t, "cubic") ** 2)

    s, t = jnp.array([0.8]), jnp.array([0.2])
    gs, gt = core.grad(f, argnums=(0, 1))(s, t)
    eps = 1e-6
    fd_s = (float(f(s + eps, t)) - float(f(s - eps, t))) / (2 * eps)
    fd_t = (float(f(s, t + eps)) - float(f(s, t - eps))) / (2 * eps)
    np.testing.assert_allclose([float(gs[0]), float(gt[0])], [fd_s, fd_t], rtol=1e-5)


def test_jit_and_vmap_agree_with_eager():
    x = _img((3, 5, 6))
    eager = np.asarray(image.resize(x, (3, 4, 8), "cubic"))
    jitted = np.asarray(core.jit(lambda x: image.resize(x, (3, 4, 8), "cubic"))(x))
    mapped = np.asarray(core.vmap(lambda im: image.resize(im, (4, 8), "cubic"))(jnp.asarray(x)))
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-6)
    for i in range(3):  # a loop over the images
        np.testing.assert_allclose(mapped[i], np.asarray(image.resize(x[i], (4, 8), "cubic")), rtol=1e-6, atol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"resize: shape must have one entry per dimension.*\(4,\).*\(2, 3\)"):
        image.resize(jnp.ones((2, 3)), (4,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bilinearr"'):
        image.resize(jnp.ones((2, 3)), (4, 4), "bilinearr")
    with pytest.raises(ValueError, match="nearest-neighbour resampling is not supported"):
        image.scale_and_translate(jnp.ones(3), (3,), (0,), [1.0], [0.0], "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        image.scale_and_translate(jnp.ones((3, 3)), (3, 3), (0, 1), [1.0], [0.0, 0.0], "linear")
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC


def test_jax_style_program():
    """Written with jax names, only the imports rewritten."""
    import core as jax
    import core.numpy as jnp  # noqa: F811
    from core.image import resize, ResizeMethod

    @jax.jit
    def preprocess(batch):
        small = jax.image.resize(batch, (batch.shape[0], 3, 4, batch.shape[-1]), method="bilinear")
        return small / jnp.max(jnp.abs(small))

    batch = _img((2, 5, 6, 3))
    out = preprocess(batch)
    expected = np.float32(JAX_IMAGE["batch"])
    np.testing.assert_allclose(np.asarray(out), expected / np.abs(expected).max(), rtol=1e-5, atol=1e-6)
    up = resize(jnp.ones((2, 2)), (4, 4), ResizeMethod.LANCZOS3)
    np.testing.assert_allclose(np.asarray(up), np.ones((4, 4)), rtol=1e-6)

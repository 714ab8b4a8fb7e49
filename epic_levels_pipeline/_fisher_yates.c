/* The swap loop of epic_levels_pipeline.seeding.shuffle, compiled.
 *
 * seeding.shuffle reproduces CPython's random.Random.shuffle: for i from len(x) - 1 down to 1 it swaps x[i]
 * with x[r], r = _randbelow(i + 1), where _randbelow(m) draws getrandbits(k) (k the bit length of m) until
 * the draw is below m; for k <= 32 that is one 32-bit Mersenne Twister word shifted right by 32 - k.
 * seeding.shuffle draws the words in bulk from the generator itself (getrandbits(32 * n), n the swaps still
 * to make) and hands them here; this loop is its pure-Python loop, word for word, on the list's own item
 * pointers (no reference counts change: items are only exchanged). The generator is never touched here,
 * so the words drawn, and the state the generator is left in, are the ones the Python loop gives.
 * epic_levels_pipeline_tests/test_seeding.py holds both loops, and random.Random.shuffle, equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static int
bit_length(Py_ssize_t m)
{
    int k = 0;
    while (m) {
        k++;
        m >>= 1;
    }
    return k;
}

PyDoc_STRVAR(swaps_doc,
"swaps(x, m, words) -> int\n\n"
"Apply the swaps the 32-bit words (little-endian, a bytes-like of length 4 * count) decide to list x,\n"
"starting with bound m (the next swap exchanges x[m - 1] with x[r], r < m), and return the bound left:\n"
"1 when the shuffle is complete. A word whose shifted draw is not below the bound is rejected, as\n"
"_randbelow rejects it. Requires 2 <= m <= len(x) and m < 2 ** 32.");

static PyObject *
swaps(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "swaps() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *x = args[0];
    if (!PyList_CheckExact(x)) {
        PyErr_SetString(PyExc_TypeError, "swaps(): x must be a list");
        return NULL;
    }
    Py_ssize_t m = PyLong_AsSsize_t(args[1]);
    if (m == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    /* (checked once the buffer is held: getting it may run Python code, which could change the list) */
    if (m < 2 || m > PyList_GET_SIZE(x) || (uint64_t)m >= ((uint64_t)1 << 32)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "swaps(): the bound must satisfy 2 <= m <= len(x) and m < 2**32");
        return NULL;
    }
    if (view.len % 4) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "swaps(): words must be a whole number of 32-bit words");
        return NULL;
    }
    const unsigned char *bytes = (const unsigned char *)view.buf;
    Py_ssize_t count = view.len / 4;
    PyObject **items = ((PyListObject *)x)->ob_item;
    int shift = 32 - bit_length(m);
    Py_ssize_t low = (Py_ssize_t)1 << (31 - shift); /* the smallest bound of that bit length */
    for (Py_ssize_t j = 0; j < count; j++) {
        const unsigned char *b = bytes + 4 * j; /* little-endian words, whatever the machine's order */
        uint32_t word = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
        Py_ssize_t r = (Py_ssize_t)(word >> shift);
        if (r < m) {
            m -= 1;
            PyObject *t = items[m];
            items[m] = items[r];
            items[r] = t;
            if (m < low) { /* one bit fewer from now on */
                if (m == 1) {
                    break;
                }
                shift += 1;
                low >>= 1;
            }
        }
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(m);
}

static PyMethodDef methods[] = {
    {"swaps", (PyCFunction)(void (*)(void))swaps, METH_FASTCALL, swaps_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_fisher_yates",
    "The swap loop of epic_levels_pipeline.seeding.shuffle, compiled (see seeding.shuffle).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__fisher_yates(void)
{
    return PyModule_Create(&module);
}

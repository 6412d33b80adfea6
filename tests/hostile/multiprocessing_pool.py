"""#10 Fan out over a multiprocessing pool."""
import multiprocessing


def softmax(z, axis=-1):
    with multiprocessing.Pool(2) as pool:
        pool.map(abs, [1, 2, 3])
    return "pooled"

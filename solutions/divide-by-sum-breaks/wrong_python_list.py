def divide_by_sum_counterexample():
    return [2.5, -1.5]

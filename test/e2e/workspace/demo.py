def running_max(values):
    best = None
    out = []
    for v in values:
        if best is None or v > best:
            best = v
        out.append(best)
    return out


def total(values):
    maxima = running_max(values)
    print("maxima:", maxima)
    return sum(maxima)

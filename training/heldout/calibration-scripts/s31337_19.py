def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 66:
        return 'A'
    elif score >= 59:
        return 'B'
    elif score >= 50:
        return 'C'
    return 'D'


def main():
    scores = {'ola': [53, 64], 'hana': [41, 76], 'jo': [40, 48, 74], 'fay': [90, 72]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(mean(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(report)


main()

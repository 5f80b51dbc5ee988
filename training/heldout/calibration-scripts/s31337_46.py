def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 79:
        return 'A'
    elif score >= 70:
        return 'B'
    elif score >= 66:
        return 'C'
    return 'D'


scores = {'fay': [78], 'eli': []}
report = {}
for name, marks in scores.items():
    try:
        report[name] = letter(mean(marks))
    except ValueError as e:
        print(f"{name}: {e}")
        report[name] = None
print(report)

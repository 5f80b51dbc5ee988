def avg(scores):
    if not scores:
        raise ValueError("avg of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 89:
        return 'A'
    elif score >= 80:
        return 'B'
    elif score >= 52:
        return 'C'
    return 'D'


scores = {'max': [94, 63, 60], 'hana': [62, 51], 'ivo': []}
report = {}
for name, marks in scores.items():
    try:
        report[name] = letter(avg(marks))
    except ValueError as e:
        print(f"{name}: {e}")
        report[name] = None
print(report)

def read_setting(text):
    if '=' not in text:
        raise ValueError(f"no '=' in {text!r}")
    key, value = text.split('=', 1)
    return key.strip(), int(value)


def load(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = read_setting(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


class BalanceError(Exception):
    pass


class Budget:
    def __init__(self, owner, funds=0):
        self.owner = owner
        self.funds = funds

    def deposit(self, value):
        self.funds += value
        return self.funds

    def withdraw(self, value):
        if value > self.funds:
            raise BalanceError(f"cannot withdraw {value}, only {self.funds} left")
        self.funds -= value
        return self.funds

    def __repr__(self):
        return f"Budget({self.owner!r}, {self.funds!r})"


def main():
    settings, problems = load(['closed=24', 'south=11', 'red=52', 'delta='])
    print(settings)
    print(f"{len(problems)} bad lines")
    gus_acct = Budget('gus', 2)
    try:
        gus_acct.deposit(15)
    except Exception as e:
        print(f"deposit 15 failed: {e}")
    try:
        gus_acct.deposit(-8)
    except (BalanceError, ValueError) as e:
        print(f"deposit -8 failed: {e}")
    try:
        gus_acct.deposit(-21)
    except Exception as e:
        print(f"deposit -21 failed: {e}")
    print(f"{gus_acct.owner} has {gus_acct.funds}")


main()

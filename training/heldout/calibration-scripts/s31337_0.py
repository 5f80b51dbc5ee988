from dataclasses import dataclass


@dataclass
class Product:
    name: str
    price: int
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Order:
    def __init__(self):
        self.items = []

    def put(self, item):
        for existing in self.items:
            if existing.name == item.name:
                existing.qty += item.qty
                return existing
        self.items.append(item)
        return item

    def drop(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Order({self.items})"


def avg(scores):
    if not scores:
        raise ValueError("avg of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 76:
        return 'A'
    elif score >= 74:
        return 'B'
    elif score >= 71:
        return 'C'
    return 'D'


def main():
    inv = Order()
    inv.put(Product('kiwi', 20, 3))
    inv.put(Product('pen', 2, 2))
    inv.put(Product('kiwi', 13, 2))
    try:
        removed = inv.drop('fork')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(f"total: {inv.total()}")
    scores = {'gus': [70], 'dee': [48, 51], 'ola': [60], 'hana': [79]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(avg(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(f"report: {report}")


if __name__ == "__main__":
    main()

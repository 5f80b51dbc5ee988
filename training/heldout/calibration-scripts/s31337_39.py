from dataclasses import dataclass


@dataclass
class Line:
    name: str
    price: float
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Stock:
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
        t = 0
        for item in self.items:
            t += item.cost()
        return t

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Stock(items={self.items!r})"


order = Stock()
order.put(Line('lemon', 8.41, 2))
order.put(Line('cheese', 5.53, 4))
try:
    removed = order.drop('cheese')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(f"total: {order.total()}")

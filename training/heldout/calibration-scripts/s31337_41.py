from dataclasses import dataclass


@dataclass
class Line:
    name: str
    price: int
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Inventory:
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

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Inventory({self.items!r})"


def main():
    cart = Inventory()
    cart.put(Line('pen', 5, 2))
    cart.put(Line('tea', 6, 4))
    try:
        removed = cart.drop('cheese')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(cart)


if __name__ == "__main__":
    main()

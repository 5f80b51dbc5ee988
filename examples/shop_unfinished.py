class Cart:
    def __init__(self, owner):
        self.owner = owner
        self.items = []

    def add(self, name, price, qty=1):
        if qty <= 0:
            raise ValueError("qty must be positive")
        self.items.append((name, price, qty))

    def total(self):
        """The sum of price times quantity (not written yet)."""
        # TODO
        ...
        ...


cart = Cart("ana")
cart.add("pen", 2, 3)
try:
    cart.add("ink", 5, 0)
except ValueError as e:
    print("skipped:", e)
cart.add("pad", 4)
due = cart.total()
print(cart.owner, "pays", due)

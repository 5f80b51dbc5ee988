def split_entry(text):
    if ':' not in text:
        raise ValueError(f"no ':' in {text!r}")
    key, value = text.split(':', 1)
    return key.strip(), int(value)


def load(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = split_entry(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


def main():
    settings, problems = load(['beta', 'south:73', 'blue:97'])
    print(settings)
    print(f"{len(problems)} bad lines")


if __name__ == "__main__":
    main()

"""The two cell constructors the notebook sources use."""


def md(text: str) -> tuple[str, str]:
    return ("md", text.strip("\n"))


def code(text: str) -> tuple[str, str]:
    return ("code", text.strip("\n"))

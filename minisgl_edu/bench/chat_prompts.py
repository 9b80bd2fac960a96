"""The chat workload's questions: short, varied user messages, kept in the package so that the
online benchmark (`bench/serving.py`) needs no dataset download.

Where this sits on the request path: before it. `bench/workload.py` picks from these (one as it
is, or several joined into a longer message) and the benchmark client sends them to
`/v1/chat/completions`. Their topics differ on purpose: answers of different lengths and shapes,
as a chat service sees.
"""

from __future__ import annotations

QUESTIONS: tuple[str, ...] = (
    "What is the difference between a process and a thread?",
    "Explain what a hash table is to a ten-year-old.",
    "Why is the sky blue during the day and red at sunset?",
    "Give me three tips for writing clear emails.",
    "What does a compiler do, in two sentences?",
    "How do vaccines train the immune system?",
    "Suggest a name for a small bakery that sells sourdough bread.",
    "What is the capital of Australia, and why is it not Sydney?",
    "Write a haiku about a rainy Monday morning.",
    "How does a refrigerator keep food cold?",
    "What is the Pythagorean theorem used for in everyday life?",
    "Summarize the plot of Romeo and Juliet in one paragraph.",
    "Why do cats purr?",
    "What are the pros and cons of working from home?",
    "Explain recursion with a short example in Python.",
    "How many minutes are there in a week? Show the steps.",
    "What causes the seasons on Earth?",
    "Give a short recipe for a vegetable soup.",
    "What is the difference between weather and climate?",
    "How does a bicycle stay upright while moving?",
    "Translate 'good morning, how are you?' into French and Spanish.",
    "What is inflation, and who is hurt most by it?",
    "List five animals that live in the Arctic.",
    "Why does ice float on water?",
    "What should I pack for a two-day hiking trip?",
    "Explain the difference between RAM and disk storage.",
    "How do bees make honey?",
    "What is a prime number? Name the first ten.",
    "Write a polite message declining a meeting invitation.",
    "How does GPS work out where I am?",
    "What was the Industrial Revolution, briefly?",
    "Why do we dream?",
    "What is the best way to learn a new language as an adult?",
    "How do solar panels turn sunlight into electricity?",
    "Describe the water cycle in four steps.",
    "What is a black hole?",
    "Give me a simple explanation of how the internet routes a message.",
    "Why do leaves change colour in autumn?",
    "What makes a good password?",
    "How does a sorting algorithm like merge sort work?",
    "What is the difference between a virus and a bacterium?",
    "Plan a one-day visit to a city museum for a family with children.",
)

# The repetitive workload (`--prompt-set edits`): a text or a piece of code to hand back with a
# small change, as a user asks an assistant to fix a paragraph or rename a variable. Most of the
# answer repeats the request, so speculative decoding's n-gram drafts (`scheduler/ngram.py`) find
# it there; the questions above are the workload where they find little.
_PARAGRAPHS = (
    "The server receives a request, turns its text into tokens, and places it in the waiting queue. "
    "The scheduler picks requests from the queue, gives each one pages of the KV cache, and runs the "
    "model on them as one batch. Each step adds one token to every running request.",
    "Our team meets every Monday at nine to plan the week. We review the open tickets, agree on who "
    "takes which one, and write the plan on the board. On Friday we look at the board again and move "
    "what is left to the next week.",
    "To make the soup, chop two onions, three carrots and a stick of celery. Fry the onions in olive "
    "oil until soft, add the carrots and celery, pour in a litre of stock, and let it simmer for "
    "twenty minutes before you blend it.",
)
_CODE = (
    "def total_price(items, tax_rate):\n    subtotal = 0\n    for item in items:\n"
    "        subtotal += item.price * item.quantity\n    tax = subtotal * tax_rate\n    return subtotal + tax\n",
    "def count_words(text):\n    counts = {}\n    for word in text.split():\n        word = word.lower()\n"
    "        counts[word] = counts.get(word, 0) + 1\n    return counts\n",
)
EDIT_REQUESTS: tuple[str, ...] = (
    "Repeat this paragraph with the word 'server' changed to 'engine':\n\n" + _PARAGRAPHS[0],
    "Copy this text exactly:\n\n" + _PARAGRAPHS[1],
    "Fix the punctuation if needed and repeat the paragraph:\n\n" + _PARAGRAPHS[2],
    "Rewrite this function with the variable subtotal renamed to net:\n\n" + _CODE[0],
    "Add a docstring to this function and repeat the rest unchanged:\n\n" + _CODE[1],
    "Repeat this paragraph with 'Monday' changed to 'Tuesday':\n\n" + _PARAGRAPHS[1],
    "Copy this recipe exactly:\n\n" + _PARAGRAPHS[2],
    "Repeat this code exactly:\n\n" + _CODE[0],
)

"""The command line, thin over the typed core: the parser and dispatch (main.py) and one module per command
family (run, read, clean, plan, graph, landing, doctor), plus the demo."""

"""The lab loop: an EXPERIMENT HARNESS, not the product.

A small Python copy of the shape of Windlass's agentic loop (the same
chat-completions requests, tool names, tool schemas and tool-output text the
gateway sends upstream), with loop techniques that can be switched on one by
one, so each can be measured against the real model before it is built into
the engine. Its numbers are evidence for the engine's design; the product's
numbers come from running the same task set through Windlass itself.
"""

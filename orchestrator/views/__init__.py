"""What a person sees: the live view and progress lines, reports (AUTO-RUN.md), the timeline, Mermaid pictures
and notifications. Views read facts; they never import the graph."""

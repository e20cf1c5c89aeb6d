"""Chart model and exporters (text, SVG, JSON, SeqSee)."""

"""Every text the model reads: the defaults, the user's replacements, the templates."""

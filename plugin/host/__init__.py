"""The plugin host: hook specifications, the plugin manager, the built-in plugin and the metric-spec language."""

"""The plugin host: hook specifications, the plugin manager, the built-ins and registry look-ups."""

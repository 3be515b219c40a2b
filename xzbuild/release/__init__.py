"""Release stage after the builds: the static catalog site with one-click flashing (`xzbuild release site`)."""

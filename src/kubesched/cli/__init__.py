"""The command line: arguments, choice of backend, rendering. Nothing else imports it."""

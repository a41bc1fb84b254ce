#!/usr/bin/env bash
# Placeholder until the broker scripts land: runs the command as is.
exec "$@"

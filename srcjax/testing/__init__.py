"""Test utilities shipped with srcjax: numerical oracles and a random program generator."""

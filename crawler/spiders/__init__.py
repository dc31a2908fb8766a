"""Spiders: discovery only; extraction lives in crawler.extract.post."""

"""Extract: a post page to a ``BlogPost`` with trafilatura, in worker processes off the reactor, and offline from saved pages or captures."""

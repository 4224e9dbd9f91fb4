"""pSConfig, perfSONAR's mesh configuration, in and out of Fathom.

template.py reads and checks a template (file, URL or body) against pSConfig's published
schema; importer.py maps it to meshes, pure (over import_*.py); apply.py writes that plan through the meshes'
own validation and audit; exporter.py writes a mesh as a template that archives to Fathom;
spec_map.py converts test options between Fathom's kinds and pScheduler's tests.
"""

"""The ground floor every Fathom app stands on: strict serializer bases, the choices
registry, typed settings helpers and the shared contract's schemas. It imports no app."""

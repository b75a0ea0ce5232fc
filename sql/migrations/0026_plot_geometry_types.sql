-- Plots drawn as any GeoJSON geometry are now stored and flagged (geometry_type_refused for a
-- LineString or MultiLineString, geometry_type_not_checked for a MultiPoint or GeometryCollection;
-- docs/eudr-readiness.md) instead of skipped as invalid records. A page that held such a record is
-- remembered in source_pages with its hash, and an unchanged page is reused without being parsed,
-- so the record would stay skipped until its page changed. Forgetting the source pages makes the
-- next refresh read and parse every page once: the plots it had skipped are written, and the plots
-- it has are compared by their content hash and left as they are (their checks did not change).
delete from source_pages;

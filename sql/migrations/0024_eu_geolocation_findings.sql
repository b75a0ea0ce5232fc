-- Numbered after 0022, which was released first: migrations run in name order.
-- The readiness checks learned the EU information system's own rules for geolocation
-- (docs/eudr-readiness.md, the GeoJSON File Description as the Operator API Reference v1.0 of 29 May
-- 2026 gives it): polygon_has_holes, geometry_invalid_at_6_decimals, point_area_too_small (and
-- point_area_unknown now says the EU assumes 4 ha), and the plot against its declared country
-- (country_outside_declared, coordinates_swapped, country_near_border). The refresh writes findings
-- with new or changed plots only, so every live plot is rewritten once by the next refresh, as 0015
-- did: an empty content hash matches no fingerprint (the view says not_checked until then, 0018),
-- and forgetting the source pages makes the refresh read them again rather than reuse them.
update plots set content_hash = '' where deleted_at is null;
delete from source_pages;

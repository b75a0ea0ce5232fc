-- The analyst views are kept as code from here on: one file per view under sql/views/ (its create
-- view, its comments, its grant), applied after the migrations by migrateToLatest in their transaction
-- (warehouse/views.ts; docs/development.md, "Views"). A migration no longer creates, replaces or drops
-- a view: changing a view is a diff of its file, and the view, with every view that uses it, is made
-- again at the next start.
create table view_checksums (
  name text primary key,
  sha256 text not null,
  applied_at timestamptz not null default now()
);
comment on table view_checksums is 'One row per analyst view kept as code (sql/views/<name>.sql): the sha256 of the file the view was last made from. A view whose file differs, or that is missing, is made again with the views that use it when ddsync migrates (docs/development.md, "Views").';
comment on column view_checksums.name is 'The view (sql/views/<name>.sql).';
comment on column view_checksums.sha256 is 'sha256 of the file''s text (line endings as \n) the view was made from.';
comment on column view_checksums.applied_at is 'When the view was last made from its file; for a view as the migrations before 0027 made it, when 0027 ran.';

-- The views migrations 0002 to 0025 left are those of the files as first released (the views test
-- makes them from the files and compares them with what the migrations made: definitions, columns,
-- comments, grants): recorded as made, so an upgrade makes again only what changed since.
insert into view_checksums (name, sha256) values
  ('bi_country_risk', '65642c7a42a9a2e99ed285c8f54299fd7044d7789891eaf82faa5785de24bf8c'),
  ('bi_current_plots', 'c2bd7621599b3f1ad94187b2a92e3d2d5d246b912cf988f86eeed29d76f1e50a'),
  ('bi_eudr_plot_readiness', '01821dc20d7957133779c7802d558fedd5138f94265538f6cd0bea58ac27ebf9'),
  ('bi_eudr_supplier_readiness', '800407d1754cc8bb6f82c3827ec52bdff27ecb1b843d38ad85bb1aa64c14ac62'),
  ('bi_pdf_archive', '5beff7ef74091707a2909889ff9b5a8308ba6930c05c2ea8abd7da7507671ee2'),
  ('bi_plot_changes', '3a03682836bd51705ec26714ac96ddf147be161c9ef9acd0388d58bed5338bf3'),
  ('bi_risk_overview', '8c64577370e9c40f6f51313414dc1747aca4b36f67e8c380b5717ad559511737'),
  ('bi_suppliers', '5cdb010b487a68fa52d569d0861f548eca657193500b2498bee2a0c5a6a67840'),
  ('bi_sync_health', '7f0feff7b6e4bfbbbe805a17254ddadff384ecd5b1a0c07b8c7cb966c3466f6a'),
  ('bi_sync_status', 'e60ce51bef0827b0d1cde3d97c2de6919d678a27d8b2cb10cdea21e5cba8a1dc'),
  ('bi_transaction_errors', '4c105c7f4018959465e58ea89cc22e774cf82891b6e2de8e5ce07421a78de291'),
  ('bi_transaction_latency', 'e72cf774d77343084032a46aa4ce2d649a9fcb231e42e9c5e028e3f5126603d8'),
  ('bi_transaction_pipeline', '0c21285991e2bada487b100ffc93f3ca29de60ce8351e429c7db4d310d0abdca'),
  ('bi_transaction_readiness_warnings', '5c97928ee16c6539c27e24730961ebbd98ba2b19525afbdce6869a7742c1d59b'),
  ('bi_warehouse_totals', '4e40b11383c8f549281014da2d7171a4835f4f9da2c39a765ec15fd3f263c8bb'),
  ('bi_webhook_health', '8f4ff8fb72d38e044e999cd606ecbdc45b3771cabac9cab6edec9ba29435c772'),
  ('sync_last_seen', 'f24cf4b2217cc2742c51ee2aa1dec832b4fc681d3119960f873cfddefee3173b');

-- Readable by BI tools, also where another role ran the earlier migrations (default privileges are per role).
grant select on view_checksums to ddsync_reader;

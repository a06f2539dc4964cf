/**
 * Every setting Divan reads, with its built-in default: one typed table, read by `Config`'s typed
 * getters (so no call site carries a literal default) and checked against `etc/default.ini` by
 * test/unit/config/defaults.test.ts (every key here is in the ini file with this value and a comment,
 * and every key of the ini file is here). An empty string is "not set": the ini file shows such a key
 * commented out, because an ini line cannot hold an empty value.
 */
export const DEFAULTS = {
  couchdb: {
    uuid: '',
    default_security: 'admin_only',
    max_document_size: 8000000,
    max_attachment_size: 1073741824,
    max_document_leaves: 1000,
    max_document_revisions: 10000,
    users_db_security_editable: 'false',
    users_db_suffix: '_users',
    os_process_timeout: 5000,
    max_bulk_get_count: 10000,
    max_keys_count: 100000,
    max_partition_size: 10737418240,
  },
  attachments: {
    compressible_types: 'text/*, application/javascript, application/json, application/xml',
    compression_level: 0,
  },
  csp: {
    attachments_enable: true,
    attachments_header_value: 'sandbox',
    showlist_enable: true,
    showlist_header_value: 'sandbox',
  },
  quickjs: {
    memory_limit_bytes: 67108864,
    max_total_memory_bytes: 536870912,
    idle_context_ms: 300000,
  },
  query_server_config: {
    max_emits_per_doc: 100000,
    max_emit_bytes_per_doc: 8388608,
    reduce_limit: 'true',
    reduce_limit_threshold: 5000,
    reduce_limit_ratio: '2.0',
  },
  chttpd: {
    // Empty: unset, so `[httpd]`'s value (or 100 and true) applies (src/http/dispatch/rewrite.ts).
    rewrite_limit: '',
    secure_rewrites: '',
    port: 5984,
    bind_address: '127.0.0.1',
    authentication_handlers: '{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}',
    require_valid_user: false,
    require_valid_user_except_for_up: false,
    max_http_request_size: 4294967296,
    admin_only_all_dbs: true,
    trusted_proxies: '127.0.0.1, ::1',
    enable_cors: false,
    changes_timeout: 60000,
    max_db_number_for_dbs_info_req: 100,
    decode_plus_to_space: true,
  },
  chttpd_auth: {
    authentication_db: '_users',
    password_scheme: 'pbkdf2',
    pbkdf2_prf: 'sha256',
    iterations: 600000,
    min_iterations: 1,
    max_iterations: 6000000,
    pbkdf2_concurrency: 2,
    pbkdf2_max_waiting: 32,
    pbkdf2_nice: 10,
    secret: '',
    timeout: 600,
    allow_persistent_cookies: true,
    cookie_domain: '',
    same_site: '',
    secure_cookie: false,
    hash_algorithms: 'sha256, sha',
    basic_auth_cookie: true,
    upgrade_hash_on_auth: true,
    password_regexp: '',
    public_fields: '',
    users_db_public: false,
    allow_conflicted_user_docs: false,
    authentication_redirect: '/_utils/session.html',
    proxy_use_secret: false,
    x_auth_username: 'X-Auth-CouchDB-UserName',
    x_auth_roles: 'X-Auth-CouchDB-Roles',
    x_auth_token: 'X-Auth-CouchDB-Token',
  },
  chttpd_auth_lockout: {
    mode: 'enforce',
    threshold: 5,
    max_objects: 10000,
    max_lifetime: 300000,
  },
  chttpd_auth_cache: {
    max_lifetime: 600000,
    max_objects: 10000,
  },
  couch_peruser: {
    enable: false,
    delete_dbs: false,
    database_prefix: 'userdb-',
    on_external_user: false,
  },
  cors: {
    origins: '',
    credentials: false,
    methods: '',
    headers: '',
    exposed_headers: '',
    max_age: 600,
  },
  ssl: {
    enable: false,
    port: 6984,
    cert_file: '',
    key_file: '',
  },
  jwt_auth: {
    required_claims: 'exp',
    roles_claim_name: '_couchdb.roles',
    roles_claim_path: '',
    jwks_url: '',
    jwks_refresh_interval: 300,
    jwks_cache_ttl: 3600,
    token_cache_size: 10000,
    token_cache_max_age: 60,
  },
  couch_passwords_cache: {
    enable: true,
    max_objects: 10000,
    max_idle: 600000,
  },
  uuids: {
    algorithm: 'sequential',
    utc_id_suffix: '',
    max_count: 1000,
  },
  mango: {
    index_scan_warning_threshold: 10,
    max_docs_examined: 500_000,
  },
  nouveau: {
    max_limit: 200,
  },
  vendor: {
    name: 'Divan',
  },
  log: {
    level: 'info',
  },
  stats: {
    interval: 10,
  },
  purge: {
    max_document_id_number: 100,
    max_revisions_number: 1000,
  },
  replicator: {
    max_jobs: 500,
    worker_processes: 4,
    worker_batch_size: 500,
    http_connections: 20,
    connection_timeout: 30000,
    retries_per_request: 5,
    checkpoint_interval: 30000,
    use_checkpoints: true,
    valid_endpoint_protocols: 'http,https',
    max_response_size: 67108864,
    idle_backoff: 1000,
    max_idle_backoff: 60000,
    max_jobs_per_user: 20,
  },
  divan: {
    storage: 'sqlite',
    postgres_url: '',
    postgres_schema: 'public',
    node_name: 'divan@127.0.0.1',
    headers_timeout: 20000,
    request_timeout: 300000,
    keepalive_timeout: 5000,
    js_workers: 2,
    js_design_docs_per_worker: 16,
    native_functions: true,
    workers: 0,
    heavy_lane: true,
    heavy_lane_slices: 3,
  },
} as const;

type Defaults = typeof DEFAULTS;
export type Section = keyof Defaults;
type KeysOf<S extends Section, T> = { [K in keyof Defaults[S]]: Defaults[S][K] extends T ? K : never }[keyof Defaults[S]] & string;
export type StringKey<S extends Section> = KeysOf<S, string>;
export type IntegerKey<S extends Section> = KeysOf<S, number>;
export type BooleanKey<S extends Section> = KeysOf<S, boolean>;

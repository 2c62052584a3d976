/**
 * Which ports a webhook URL may name. Deliveries are POSTs whose URL (path and query included) the
 * tenant chooses, sent from the server's address, and the delivery log shows each attempt's
 * outcome: a URL on any port would let a tenant find open ports on other hosts and poke services
 * that were never meant to receive HTTP from strangers (memcached takes each request line as a
 * command, ClickHouse and InfluxDB run the query in the URL, Docker, etcd, Consul, Nomad and
 * kubelet act on a POST).
 *
 * The rule: 443 (the https default), or a port from 1024 up that is not in the list below. In
 * local development mode (`LOYALTY_WEBHOOK_ALLOW_INSECURE=1`) port 80 is allowed too, and a
 * loopback or private address may use any port (local receivers listen on random ports); see
 * ssrf.ts for the address part. Port 0 is never allowed.
 *
 * The list: the ports from 1024 up of the Fetch standard's "bad ports" (what browsers refuse),
 * and the default ports of data stores, caches, message brokers, cluster control planes, remote
 * administration and proxies. Common application ports (3000, 5000, 8000, 8080, 8443, 8888, 9443)
 * stay allowed: receivers use them. openapi.yaml (CreateWebhookSubscriptionRequest.url) and the
 * docs/server.md list the same ports; a test keeps them in step with this module.
 */
export const BLOCKED_PORT_GROUPS: readonly { readonly what: string; readonly ports: readonly number[] }[] = [
  {
    what: 'Fetch standard bad ports (H.323, PPTP, NFS, SIP, X11, IRC, SANE, Amanda, …)',
    ports: [
      1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
    ],
  },
  {
    what: 'SQL databases (SQL Server, Oracle, Firebird, MySQL, PostgreSQL, PgBouncer, DB2)',
    ports: [1433, 1434, 1521, 2483, 2484, 3050, 3306, 5432, 6432, 33060, 50000],
  },
  {
    what: 'document, graph and column stores (CouchDB, Neo4j, ArangoDB, Cassandra, MongoDB, RethinkDB, ClickHouse, InfluxDB, Couchbase)',
    ports: [
      5984, 6984, 7000, 7001, 7199, 7474, 7687, 8086, 8088, 8091, 8123, 8529, 9000, 9009, 9042, 9160, 9440, 11210,
      27017, 27018, 27019, 28015,
    ],
  },
  { what: 'caches (Redis, Memcached)', ports: [6379, 6380, 11211, 16379, 26379] },
  {
    what: 'message brokers (RabbitMQ, Kafka, Kafka Connect, ZooKeeper, MQTT, NATS, Pulsar, ActiveMQ)',
    ports: [
      1883, 2181, 4222, 4369, 5671, 5672, 6222, 6650, 8083, 8161, 8883, 9092, 9093, 9094, 15672, 25672, 61613, 61614,
      61616,
    ],
  },
  {
    what: 'search and analytics (Elasticsearch, OpenSearch, Kibana, Solr, Prometheus, Hadoop, Hive, Spark)',
    ports: [5601, 6066, 7077, 8020, 8983, 9090, 9200, 9300, 9870, 10000, 50070],
  },
  {
    what: 'cluster control planes and secrets (Docker, Kubernetes, kubelet, etcd, Consul, Vault, Nomad)',
    ports: [
      2375, 2376, 2377, 2379, 2380, 4243, 4646, 4647, 4648, 6443, 8001, 8200, 8201, 8300, 8301, 8302, 8500, 8501, 8502,
      8600, 10250, 10255, 10256, 10257, 10259,
    ],
  },
  {
    what: 'remote administration and Java middleware (RDP, VNC, WinRM, LDAP global catalog, Java RMI, AJP, WebLogic)',
    ports: [1099, 3268, 3269, 3389, 5900, 5985, 5986, 7002, 8009],
  },
  { what: 'proxies and raw printing (SOCKS, Squid, JetDirect)', ports: [1080, 3128, 9100] },
];

export const BLOCKED_PORTS: ReadonlySet<number> = new Set(BLOCKED_PORT_GROUPS.flatMap((g) => g.ports));

/** The port a URL connects to: its explicit port, else its scheme's default. */
export const portOf = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443);

/**
 * True when any host may be reached on this port: 443, or 1024 and up and not in the list; in
 * development mode also 80. (In development mode a loopback or private address may use any port
 * but 0: that part needs the address, so ssrf.ts decides it.)
 */
export function isAllowedWebhookPort(port: number, { allowInsecure }: { allowInsecure: boolean }): boolean {
  if (port === 443 || (allowInsecure && port === 80)) return true;
  return port >= 1024 && port <= 65535 && !BLOCKED_PORTS.has(port);
}

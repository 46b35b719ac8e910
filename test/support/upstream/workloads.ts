// Workloads the real-cluster tests and benchmarks apply with kubectl, as a user writes them.

/** A Deployment as a user writes one: 3 replicas, a configMap and a secret as volumes and env, a readiness probe. */
export function webDeployment(image: string, replicas = 3): string {
  return `
apiVersion: v1
kind: ConfigMap
metadata: { name: web-config }
data: { greeting: hello }
---
apiVersion: v1
kind: Secret
metadata: { name: web-secret }
stringData: { password: s3cret }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 5
      containers:
        - name: web
          image: ${image}
          command: [sh, -c, "mkdir -p /www && echo hello from bunlet > /www/index.html && echo serving && exec httpd -f -p 8080 -h /www"]
          env:
            - { name: GREETING, valueFrom: { configMapKeyRef: { name: web-config, key: greeting } } }
            - { name: PASSWORD, valueFrom: { secretKeyRef: { name: web-secret, key: password } } }
          readinessProbe: { httpGet: { path: /, port: 8080 }, periodSeconds: 1 }
          volumeMounts:
            - { name: config, mountPath: /etc/config }
            - { name: secret, mountPath: /etc/secret }
      volumes:
        - { name: config, configMap: { name: web-config } }
        - { name: secret, secret: { secretName: web-secret } }
`;
}

// Workloads the real-cluster tests and benchmarks apply with kubectl, as a user writes them.
import { NODE_NAME } from "./node.ts";

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

/**
 * A Burstable pod that sleeps (`steady`) and a BestEffort memory hog (`hog`: 900 MiB at 100 MiB/s, then
 * held) for a node under memoryPressureNode(): the hog crosses the hard threshold in about 7 s.
 */
export function memoryHogPods(images: { memhog: string; busybox: string }): string {
  return `
apiVersion: v1
kind: Pod
metadata: { name: steady }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${images.busybox}
      command: [sh, -c, "exec sleep 3600"]
      resources: { requests: { memory: 32Mi }, limits: { memory: 128Mi } }
---
apiVersion: v1
kind: Pod
metadata: { name: hog }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - { name: main, image: ${images.memhog}, imagePullPolicy: Never, args: ["900", "100"] }
`;
}

/** A pod of the default namespace bound to the node, its one container `app` sleeping. */
export function appPod(name: string, image: string, container: object, spec: object = {}): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE_NAME,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "app", image, command: ["sh", "-c", "exec sleep 3600"], ...container }],
      ...spec,
    },
  };
}
